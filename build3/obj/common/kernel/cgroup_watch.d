build3/obj/common/kernel/cgroup_watch.o: common/kernel/cgroup_watch.c \
 common/kernel/cgroup_internal.h common/kernel/cgroup.h \
 common/base/host.h common/base/util.h
common/kernel/cgroup_internal.h:
common/kernel/cgroup.h:
common/base/host.h:
common/base/util.h:
