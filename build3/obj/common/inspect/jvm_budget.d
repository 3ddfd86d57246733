build3/obj/common/inspect/jvm_budget.o: common/inspect/jvm_budget.c \
 common/inspect/jvm.h common/base/host.h common/base/strbuf.h \
 common/base/util.h
common/inspect/jvm.h:
common/base/host.h:
common/base/strbuf.h:
common/base/util.h:
