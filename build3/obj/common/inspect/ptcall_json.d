build3/obj/common/inspect/ptcall_json.o: common/inspect/ptcall_json.c \
 common/base/fileio.h common/base/strbuf.h common/base/util.h \
 common/inspect/ptcall.h
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
common/inspect/ptcall.h:
