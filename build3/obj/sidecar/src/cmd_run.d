build3/obj/sidecar/src/cmd_run.o: sidecar/src/cmd_run.c \
 sidecar/src/commands.h common/base/cli.h common/base/log.h \
 common/base/util.h common/base/privs.h common/base/memlock.h \
 common/base/parse.h sidecar/src/run.h common/kernel/cgroup.h \
 common/base/host.h common/forensics/recorder.h common/base/strbuf.h
sidecar/src/commands.h:
common/base/cli.h:
common/base/log.h:
common/base/util.h:
common/base/privs.h:
common/base/memlock.h:
common/base/parse.h:
sidecar/src/run.h:
common/kernel/cgroup.h:
common/base/host.h:
common/forensics/recorder.h:
common/base/strbuf.h:
