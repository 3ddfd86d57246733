build3/obj/common/base/parse.o: common/base/parse.c common/base/parse.h \
 common/base/util.h
common/base/parse.h:
common/base/util.h:
