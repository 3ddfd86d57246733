build3/obj/common/inspect/ptcall_trace.o: common/inspect/ptcall_trace.c \
 common/base/fileio.h common/base/strbuf.h common/base/util.h \
 common/base/parse.h common/inspect/ptcall_internal.h \
 common/inspect/ptcall.h
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
common/base/parse.h:
common/inspect/ptcall_internal.h:
common/inspect/ptcall.h:
