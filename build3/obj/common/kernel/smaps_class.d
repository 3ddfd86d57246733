build3/obj/common/kernel/smaps_class.o: common/kernel/smaps_class.c \
 common/kernel/smaps.h common/base/strbuf.h common/base/util.h
common/kernel/smaps.h:
common/base/strbuf.h:
common/base/util.h:
