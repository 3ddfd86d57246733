build2/tests/test_diagnosis_jvm: tests/unit/test_diagnosis_jvm.c \
 common/base/util.h common/forensics/diagnosis.h
common/base/util.h:
common/forensics/diagnosis.h:
