build3/obj/sidecar/src/cmd_trim.o: sidecar/src/cmd_trim.c \
 sidecar/src/commands.h common/base/cli.h common/base/log.h \
 common/base/util.h common/base/privs.h common/base/host.h \
 common/inspect/jvm.h common/base/strbuf.h common/base/parse.h
sidecar/src/commands.h:
common/base/cli.h:
common/base/log.h:
common/base/util.h:
common/base/privs.h:
common/base/host.h:
common/inspect/jvm.h:
common/base/strbuf.h:
common/base/parse.h:
