build3/obj/agent/src/cmd_show.o: agent/src/cmd_show.c \
 agent/src/commands.h common/base/cli.h common/base/log.h \
 common/base/util.h common/base/privs.h common/forensics/bundle.h \
 common/forensics/report.h common/base/strbuf.h
agent/src/commands.h:
common/base/cli.h:
common/base/log.h:
common/base/util.h:
common/base/privs.h:
common/forensics/bundle.h:
common/forensics/report.h:
common/base/strbuf.h:
