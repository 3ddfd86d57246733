build3/obj/common/inspect/jvm_detect.o: common/inspect/jvm_detect.c \
 common/inspect/jvm_internal.h common/inspect/jvm.h common/base/host.h \
 common/base/strbuf.h common/base/util.h common/base/fileio.h \
 common/base/parse.h common/kernel/procfs.h common/kernel/smaps.h
common/inspect/jvm_internal.h:
common/inspect/jvm.h:
common/base/host.h:
common/base/strbuf.h:
common/base/util.h:
common/base/fileio.h:
common/base/parse.h:
common/kernel/procfs.h:
common/kernel/smaps.h:
