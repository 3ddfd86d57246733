build3/obj/sidecar/src/cmd_malloc_stats.o: sidecar/src/cmd_malloc_stats.c \
 sidecar/src/commands.h common/base/cli.h common/base/log.h \
 common/base/util.h common/base/privs.h common/base/host.h \
 common/base/parse.h common/kernel/procfs.h common/kernel/smaps.h \
 common/base/strbuf.h common/inspect/ptcall.h
sidecar/src/commands.h:
common/base/cli.h:
common/base/log.h:
common/base/util.h:
common/base/privs.h:
common/base/host.h:
common/base/parse.h:
common/kernel/procfs.h:
common/kernel/smaps.h:
common/base/strbuf.h:
common/inspect/ptcall.h:
