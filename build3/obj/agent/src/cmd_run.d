build3/obj/agent/src/cmd_run.o: agent/src/cmd_run.c agent/src/agent.h \
 common/kernel/cgroup.h common/base/host.h common/kernel/cgroup_mount.h \
 common/kernel/kmsg.h common/base/strbuf.h common/base/util.h \
 agent/src/correlate.h agent/src/commands.h common/base/cli.h \
 common/base/log.h common/base/privs.h common/base/fileio.h \
 common/base/memlock.h common/kernel/procfs.h common/kernel/smaps.h
agent/src/agent.h:
common/kernel/cgroup.h:
common/base/host.h:
common/kernel/cgroup_mount.h:
common/kernel/kmsg.h:
common/base/strbuf.h:
common/base/util.h:
agent/src/correlate.h:
agent/src/commands.h:
common/base/cli.h:
common/base/log.h:
common/base/privs.h:
common/base/fileio.h:
common/base/memlock.h:
common/kernel/procfs.h:
common/kernel/smaps.h:
