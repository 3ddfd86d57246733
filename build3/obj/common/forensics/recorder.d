build3/obj/common/forensics/recorder.o: common/forensics/recorder.c \
 common/base/parse.h common/forensics/recorder.h common/base/strbuf.h \
 common/base/util.h
common/base/parse.h:
common/forensics/recorder.h:
common/base/strbuf.h:
common/base/util.h:
