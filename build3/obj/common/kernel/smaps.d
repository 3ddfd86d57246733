build3/obj/common/kernel/smaps.o: common/kernel/smaps.c \
 common/base/parse.h common/kernel/smaps.h common/base/strbuf.h \
 common/base/util.h
common/base/parse.h:
common/kernel/smaps.h:
common/base/strbuf.h:
common/base/util.h:
