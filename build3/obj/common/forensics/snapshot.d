build3/obj/common/forensics/snapshot.o: common/forensics/snapshot.c \
 common/base/fileio.h common/base/strbuf.h common/base/util.h \
 common/inspect/jvm.h common/base/host.h common/kernel/procfs.h \
 common/kernel/smaps.h common/inspect/ptcall.h \
 common/forensics/snapshot.h
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
common/inspect/jvm.h:
common/base/host.h:
common/kernel/procfs.h:
common/kernel/smaps.h:
common/inspect/ptcall.h:
common/forensics/snapshot.h:
