build3/obj/sidecar/src/main.o: sidecar/src/main.c sidecar/src/commands.h \
 common/base/cli.h common/base/log.h common/base/util.h \
 common/base/privs.h
sidecar/src/commands.h:
common/base/cli.h:
common/base/log.h:
common/base/util.h:
common/base/privs.h:
