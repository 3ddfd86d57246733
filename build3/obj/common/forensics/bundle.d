build3/obj/common/forensics/bundle.o: common/forensics/bundle.c \
 common/forensics/bundle.h common/base/fileio.h common/base/strbuf.h \
 common/base/util.h
common/forensics/bundle.h:
common/base/fileio.h:
common/base/strbuf.h:
common/base/util.h:
