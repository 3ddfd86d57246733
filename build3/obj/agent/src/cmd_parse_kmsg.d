build3/obj/agent/src/cmd_parse_kmsg.o: agent/src/cmd_parse_kmsg.c \
 agent/src/commands.h common/base/cli.h common/base/log.h \
 common/base/util.h common/base/privs.h common/base/fileio.h \
 common/base/strbuf.h common/base/host.h common/kernel/kmsg.h
agent/src/commands.h:
common/base/cli.h:
common/base/log.h:
common/base/util.h:
common/base/privs.h:
common/base/fileio.h:
common/base/strbuf.h:
common/base/host.h:
common/kernel/kmsg.h:
