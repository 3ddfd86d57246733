build3/obj/common/kernel/kmsg_record.o: common/kernel/kmsg_record.c \
 common/kernel/kmsg.h common/base/strbuf.h common/base/util.h \
 common/base/parse.h
common/kernel/kmsg.h:
common/base/strbuf.h:
common/base/util.h:
common/base/parse.h:
