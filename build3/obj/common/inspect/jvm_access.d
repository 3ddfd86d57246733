build3/obj/common/inspect/jvm_access.o: common/inspect/jvm_access.c \
 common/base/fileio.h common/base/strbuf.h common/base/util.h \
 common/inspect/jvm_internal.h common/inspect/jvm.h common/base/host.h
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
common/inspect/jvm_internal.h:
common/inspect/jvm.h:
common/base/host.h:
