build3/obj/common/kernel/kmsg_json.o: common/kernel/kmsg_json.c \
 common/kernel/kmsg.h common/base/strbuf.h common/base/util.h
common/kernel/kmsg.h:
common/base/strbuf.h:
common/base/util.h:
