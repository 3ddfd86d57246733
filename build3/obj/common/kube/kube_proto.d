build3/obj/common/kube/kube_proto.o: common/kube/kube_proto.c \
 common/kube/kube.h common/base/strbuf.h common/base/util.h \
 common/base/parse.h
common/kube/kube.h:
common/base/strbuf.h:
common/base/util.h:
common/base/parse.h:
