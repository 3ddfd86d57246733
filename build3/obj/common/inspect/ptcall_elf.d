build3/obj/common/inspect/ptcall_elf.o: common/inspect/ptcall_elf.c \
 common/base/parse.h common/base/util.h common/inspect/ptcall_internal.h \
 common/inspect/ptcall.h common/base/strbuf.h
common/base/parse.h:
common/base/util.h:
common/inspect/ptcall_internal.h:
common/inspect/ptcall.h:
common/base/strbuf.h:
