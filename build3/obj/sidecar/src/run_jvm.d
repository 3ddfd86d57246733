build3/obj/sidecar/src/run_jvm.o: sidecar/src/run_jvm.c \
 common/base/fileio.h common/base/strbuf.h common/base/util.h \
 common/base/log.h common/inspect/jvm.h common/base/host.h \
 common/kernel/procfs.h common/kernel/smaps.h sidecar/src/run.h \
 common/kernel/cgroup.h common/forensics/recorder.h
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
common/base/log.h:
common/inspect/jvm.h:
common/base/host.h:
common/kernel/procfs.h:
common/kernel/smaps.h:
sidecar/src/run.h:
common/kernel/cgroup.h:
common/forensics/recorder.h:
