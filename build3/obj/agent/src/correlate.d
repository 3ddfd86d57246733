build3/obj/agent/src/correlate.o: agent/src/correlate.c \
 common/base/util.h agent/src/correlate.h common/kernel/cgroup.h \
 common/base/host.h common/kernel/kmsg.h common/base/strbuf.h
common/base/util.h:
agent/src/correlate.h:
common/kernel/cgroup.h:
common/base/host.h:
common/kernel/kmsg.h:
common/base/strbuf.h:
