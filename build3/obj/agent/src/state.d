build3/obj/agent/src/state.o: agent/src/state.c agent/src/agent.h \
 common/kernel/cgroup.h common/base/host.h common/kernel/cgroup_mount.h \
 common/kernel/kmsg.h common/base/strbuf.h common/base/util.h \
 agent/src/correlate.h common/base/fileio.h common/base/log.h \
 common/base/parse.h
agent/src/agent.h:
common/kernel/cgroup.h:
common/base/host.h:
common/kernel/cgroup_mount.h:
common/kernel/kmsg.h:
common/base/strbuf.h:
common/base/util.h:
agent/src/correlate.h:
common/base/fileio.h:
common/base/log.h:
common/base/parse.h:
