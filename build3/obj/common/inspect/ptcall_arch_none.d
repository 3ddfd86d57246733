build3/obj/common/inspect/ptcall_arch_none.o: \
 common/inspect/ptcall_arch_none.c
