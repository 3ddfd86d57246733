build3/obj/common/base/strbuf.o: common/base/strbuf.c \
 common/base/strbuf.h common/base/util.h
common/base/strbuf.h:
common/base/util.h:
