build3/obj/sidecar/src/run_spool.o: sidecar/src/run_spool.c \
 common/base/fileio.h common/base/strbuf.h common/base/util.h \
 common/inspect/jvm.h common/base/host.h common/base/log.h \
 common/inspect/ptcall.h common/forensics/snapshot.h \
 common/forensics/spool.h sidecar/src/run.h common/kernel/cgroup.h \
 common/forensics/recorder.h
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
common/inspect/jvm.h:
common/base/host.h:
common/base/log.h:
common/inspect/ptcall.h:
common/forensics/snapshot.h:
common/forensics/spool.h:
sidecar/src/run.h:
common/kernel/cgroup.h:
common/forensics/recorder.h:
