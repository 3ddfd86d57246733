build3/obj/common/kube/kube_config.o: common/kube/kube_config.c \
 common/kube/kube_internal.h common/kube/kube.h common/base/strbuf.h \
 common/base/util.h common/base/fileio.h common/base/parse.h
common/kube/kube_internal.h:
common/kube/kube.h:
common/base/strbuf.h:
common/base/util.h:
common/base/fileio.h:
common/base/parse.h:
