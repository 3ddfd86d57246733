build3/obj/common/kernel/kmsg_reader.o: common/kernel/kmsg_reader.c \
 common/kernel/kmsg.h common/base/strbuf.h common/base/util.h
common/kernel/kmsg.h:
common/base/strbuf.h:
common/base/util.h:
