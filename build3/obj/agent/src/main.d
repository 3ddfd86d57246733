build3/obj/agent/src/main.o: agent/src/main.c agent/src/commands.h \
 common/base/cli.h common/base/log.h common/base/util.h \
 common/base/privs.h
agent/src/commands.h:
common/base/cli.h:
common/base/log.h:
common/base/util.h:
common/base/privs.h:
