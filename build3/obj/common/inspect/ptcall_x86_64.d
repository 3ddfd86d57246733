build3/obj/common/inspect/ptcall_x86_64.o: common/inspect/ptcall_x86_64.c \
 common/base/util.h common/inspect/ptcall_internal.h \
 common/inspect/ptcall.h common/base/strbuf.h
common/base/util.h:
common/inspect/ptcall_internal.h:
common/inspect/ptcall.h:
common/base/strbuf.h:
