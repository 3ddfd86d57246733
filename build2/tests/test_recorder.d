build2/tests/test_recorder: tests/unit/test_recorder.c \
 common/forensics/recorder.h common/base/strbuf.h common/base/util.h
common/forensics/recorder.h:
common/base/strbuf.h:
common/base/util.h:
