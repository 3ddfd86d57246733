build3/obj/common/base/host.o: common/base/host.c common/base/host.h \
 common/base/util.h
common/base/host.h:
common/base/util.h:
