build3/obj/common/inspect/jvm_json.o: common/inspect/jvm_json.c \
 common/inspect/jvm.h common/base/host.h common/base/strbuf.h \
 common/base/util.h
common/inspect/jvm.h:
common/base/host.h:
common/base/strbuf.h:
common/base/util.h:
