build3/obj/common/kube/kube_client.o: common/kube/kube_client.c \
 common/kube/kube_internal.h common/kube/kube.h common/base/strbuf.h \
 common/base/util.h common/base/fileio.h
common/kube/kube_internal.h:
common/kube/kube.h:
common/base/strbuf.h:
common/base/util.h:
common/base/fileio.h:
