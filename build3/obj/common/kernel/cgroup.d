build3/obj/common/kernel/cgroup.o: common/kernel/cgroup.c \
 common/kernel/cgroup_internal.h common/kernel/cgroup.h \
 common/base/host.h common/base/fileio.h common/base/strbuf.h \
 common/base/util.h common/base/parse.h
common/kernel/cgroup_internal.h:
common/kernel/cgroup.h:
common/base/host.h:
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
common/base/parse.h:
