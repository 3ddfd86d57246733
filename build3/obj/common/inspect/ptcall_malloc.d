build3/obj/common/inspect/ptcall_malloc.o: common/inspect/ptcall_malloc.c \
 common/base/parse.h common/base/util.h common/inspect/ptcall_internal.h \
 common/inspect/ptcall.h common/base/strbuf.h
common/base/parse.h:
common/base/util.h:
common/inspect/ptcall_internal.h:
common/inspect/ptcall.h:
common/base/strbuf.h:
