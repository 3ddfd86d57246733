build3/obj/common/forensics/report.o: common/forensics/report.c \
 common/forensics/bundle.h common/base/parse.h common/forensics/report.h \
 common/base/strbuf.h common/base/util.h
common/forensics/bundle.h:
common/base/parse.h:
common/forensics/report.h:
common/base/strbuf.h:
common/base/util.h:
