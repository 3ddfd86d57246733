build3/obj/common/base/log.o: common/base/log.c common/base/log.h \
 common/base/util.h common/base/strbuf.h
common/base/log.h:
common/base/util.h:
common/base/strbuf.h:
