build3/obj/common/forensics/spool.o: common/forensics/spool.c \
 common/forensics/bundle.h common/kernel/cgroup.h common/base/host.h \
 common/base/fileio.h common/base/strbuf.h common/base/util.h \
 common/forensics/spool.h
common/forensics/bundle.h:
common/kernel/cgroup.h:
common/base/host.h:
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
common/forensics/spool.h:
