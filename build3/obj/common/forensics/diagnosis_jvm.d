build3/obj/common/forensics/diagnosis_jvm.o: \
 common/forensics/diagnosis_jvm.c common/base/util.h \
 common/forensics/bundle.h common/forensics/diagnosis.h
common/base/util.h:
common/forensics/bundle.h:
common/forensics/diagnosis.h:
