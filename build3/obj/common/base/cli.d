build3/obj/common/base/cli.o: common/base/cli.c common/base/cli.h \
 common/base/log.h common/base/util.h common/base/privs.h
common/base/cli.h:
common/base/log.h:
common/base/util.h:
common/base/privs.h:
