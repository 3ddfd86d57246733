build3/obj/common/base/util.o: common/base/util.c common/base/util.h
common/base/util.h:
