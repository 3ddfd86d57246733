build3/obj/agent/src/capture.o: agent/src/capture.c agent/src/agent.h \
 common/kernel/cgroup.h common/base/host.h common/kernel/cgroup_mount.h \
 common/kernel/kmsg.h common/base/strbuf.h common/base/util.h \
 agent/src/correlate.h common/forensics/bundle.h \
 common/forensics/diagnosis.h common/base/fileio.h common/base/log.h \
 common/forensics/report.h common/forensics/spool.h
agent/src/agent.h:
common/kernel/cgroup.h:
common/base/host.h:
common/kernel/cgroup_mount.h:
common/kernel/kmsg.h:
common/base/strbuf.h:
common/base/util.h:
agent/src/correlate.h:
common/forensics/bundle.h:
common/forensics/diagnosis.h:
common/base/fileio.h:
common/base/log.h:
common/forensics/report.h:
common/forensics/spool.h:
