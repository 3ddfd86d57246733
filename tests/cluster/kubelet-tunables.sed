# kubelet 1.20 rewrites host sysctls at start (vm.overcommit_memory=1,
# kernel.panic=10, kernel.panic_on_oops=1) unless told to protect them, and
# then refuses to start when they differ. A test node must leave the host
# as it found it: only warn (log) about the differences.
s/if err := setupKernelTunables(b); err != nil {/if err := setupKernelTunables(KernelTunableWarn); err != nil { _ = b/
