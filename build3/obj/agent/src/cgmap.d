build3/obj/agent/src/cgmap.o: agent/src/cgmap.c agent/src/agent.h \
 common/kernel/cgroup.h common/base/host.h common/kernel/cgroup_mount.h \
 common/kernel/kmsg.h common/base/strbuf.h common/base/util.h \
 agent/src/correlate.h common/base/log.h
agent/src/agent.h:
common/kernel/cgroup.h:
common/base/host.h:
common/kernel/cgroup_mount.h:
common/kernel/kmsg.h:
common/base/strbuf.h:
common/base/util.h:
agent/src/correlate.h:
common/base/log.h:
