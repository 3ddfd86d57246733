build3/obj/common/kernel/kmsg_buffer.o: common/kernel/kmsg_buffer.c \
 common/kernel/kmsg.h common/base/strbuf.h common/base/util.h
common/kernel/kmsg.h:
common/base/strbuf.h:
common/base/util.h:
