build3/obj/sidecar/src/run_sampler.o: sidecar/src/run_sampler.c \
 common/base/log.h common/base/util.h common/base/strbuf.h \
 sidecar/src/run.h common/kernel/cgroup.h common/base/host.h \
 common/forensics/recorder.h
common/base/log.h:
common/base/util.h:
common/base/strbuf.h:
sidecar/src/run.h:
common/kernel/cgroup.h:
common/base/host.h:
common/forensics/recorder.h:
