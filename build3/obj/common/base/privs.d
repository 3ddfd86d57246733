build3/obj/common/base/privs.o: common/base/privs.c common/base/privs.h \
 common/base/util.h
common/base/privs.h:
common/base/util.h:
