build3/obj/common/kernel/kmsg.o: common/kernel/kmsg.c \
 common/kernel/kmsg_internal.h common/kernel/kmsg.h common/base/strbuf.h \
 common/base/util.h common/base/parse.h
common/kernel/kmsg_internal.h:
common/kernel/kmsg.h:
common/base/strbuf.h:
common/base/util.h:
common/base/parse.h:
