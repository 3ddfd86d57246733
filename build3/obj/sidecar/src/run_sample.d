build3/obj/sidecar/src/run_sample.o: sidecar/src/run_sample.c \
 common/base/fileio.h common/base/strbuf.h common/base/util.h \
 common/base/parse.h common/kernel/procfs.h common/kernel/smaps.h \
 sidecar/src/run.h common/kernel/cgroup.h common/base/host.h \
 common/forensics/recorder.h
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
common/base/parse.h:
common/kernel/procfs.h:
common/kernel/smaps.h:
sidecar/src/run.h:
common/kernel/cgroup.h:
common/base/host.h:
common/forensics/recorder.h:
