build3/obj/common/inspect/ptcall_aarch64.o: \
 common/inspect/ptcall_aarch64.c
