build3/obj/common/base/fileio.o: common/base/fileio.c \
 common/base/fileio.h common/base/strbuf.h common/base/util.h
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
