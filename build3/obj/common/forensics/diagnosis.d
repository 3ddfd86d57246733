build3/obj/common/forensics/diagnosis.o: common/forensics/diagnosis.c \
 common/forensics/diagnosis.h common/base/util.h
common/forensics/diagnosis.h:
common/base/util.h:
