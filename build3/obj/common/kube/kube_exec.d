build3/obj/common/kube/kube_exec.o: common/kube/kube_exec.c \
 common/kube/kube_internal.h common/kube/kube.h common/base/strbuf.h \
 common/base/util.h
common/kube/kube_internal.h:
common/kube/kube.h:
common/base/strbuf.h:
common/base/util.h:
