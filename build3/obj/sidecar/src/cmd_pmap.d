build3/obj/sidecar/src/cmd_pmap.o: sidecar/src/cmd_pmap.c \
 sidecar/src/commands.h common/base/cli.h common/base/log.h \
 common/base/util.h common/base/privs.h common/base/fileio.h \
 common/base/strbuf.h common/base/host.h common/base/parse.h \
 common/kernel/procfs.h common/kernel/smaps.h
sidecar/src/commands.h:
common/base/cli.h:
common/base/log.h:
common/base/util.h:
common/base/privs.h:
common/base/fileio.h:
common/base/strbuf.h:
common/base/host.h:
common/base/parse.h:
common/kernel/procfs.h:
common/kernel/smaps.h:
