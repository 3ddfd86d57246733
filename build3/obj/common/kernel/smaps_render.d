build3/obj/common/kernel/smaps_render.o: common/kernel/smaps_render.c \
 common/kernel/smaps.h common/base/strbuf.h common/base/util.h
common/kernel/smaps.h:
common/base/strbuf.h:
common/base/util.h:
