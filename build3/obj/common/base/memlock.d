build3/obj/common/base/memlock.o: common/base/memlock.c \
 common/base/fileio.h common/base/strbuf.h common/base/util.h \
 common/base/memlock.h common/base/parse.h
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
common/base/memlock.h:
common/base/parse.h:
