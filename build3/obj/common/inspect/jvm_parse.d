build3/obj/common/inspect/jvm_parse.o: common/inspect/jvm_parse.c \
 common/inspect/jvm.h common/base/host.h common/base/strbuf.h \
 common/base/util.h common/base/parse.h
common/inspect/jvm.h:
common/base/host.h:
common/base/strbuf.h:
common/base/util.h:
common/base/parse.h:
