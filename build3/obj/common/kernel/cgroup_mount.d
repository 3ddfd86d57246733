build3/obj/common/kernel/cgroup_mount.o: common/kernel/cgroup_mount.c \
 common/kernel/cgroup_mount.h common/base/host.h common/kernel/cgroup.h \
 common/base/fileio.h common/base/strbuf.h common/base/util.h \
 common/base/parse.h
common/kernel/cgroup_mount.h:
common/base/host.h:
common/kernel/cgroup.h:
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
common/base/parse.h:
