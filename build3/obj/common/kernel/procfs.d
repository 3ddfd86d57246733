build3/obj/common/kernel/procfs.o: common/kernel/procfs.c \
 common/base/fileio.h common/base/strbuf.h common/base/util.h \
 common/base/parse.h common/kernel/procfs.h common/kernel/smaps.h
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
common/base/parse.h:
common/kernel/procfs.h:
common/kernel/smaps.h:
