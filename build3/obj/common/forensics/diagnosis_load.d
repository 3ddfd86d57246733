build3/obj/common/forensics/diagnosis_load.o: \
 common/forensics/diagnosis_load.c common/forensics/bundle.h \
 common/kernel/cgroup.h common/base/host.h common/forensics/diagnosis.h \
 common/inspect/jvm.h common/base/strbuf.h common/base/util.h \
 common/kernel/kmsg.h common/base/parse.h common/kernel/procfs.h \
 common/kernel/smaps.h
common/forensics/bundle.h:
common/kernel/cgroup.h:
common/base/host.h:
common/forensics/diagnosis.h:
common/inspect/jvm.h:
common/base/strbuf.h:
common/base/util.h:
common/kernel/kmsg.h:
common/base/parse.h:
common/kernel/procfs.h:
common/kernel/smaps.h:
