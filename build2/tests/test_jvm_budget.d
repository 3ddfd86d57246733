build2/tests/test_jvm_budget: tests/unit/test_jvm_budget.c \
 common/base/fileio.h common/base/strbuf.h common/base/util.h \
 common/inspect/jvm.h common/base/host.h
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
common/inspect/jvm.h:
common/base/host.h:
