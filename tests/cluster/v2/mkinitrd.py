#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""mkinitrd.py ROOT OUT: the v2 node's boot files from a guest root that
holds Debian's kernel package unpacked (build-root.sh): OUT/vmlinux (the
uncompressed ELF: boots in seconds where the bzImage takes three times as
long under TCG) and OUT/initrd.cpio (busybox-static, initrd-init as /init,
the virtio-pci, virtio-blk and ext4 modules with their dependencies). The
initramfs writer (cpio, module resolution) is tests/vm/vmlib.py's."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "vm"))
import vmlib  # noqa: E402

MODULES = ["virtio", "virtio_ring", "virtio_pci_modern_dev",
           "virtio_pci_legacy_dev", "virtio_pci", "virtio_blk",
           "crc32c_generic", "crc16", "mbcache", "jbd2", "ext4"]


def main(root, out):
    boot = os.path.join(root, "boot")
    vmlinuz = [os.path.join(boot, n) for n in os.listdir(boot)
               if n.startswith("vmlinuz-")][0]
    vmlib.extract_vmlinux(vmlinuz, os.path.join(out, "vmlinux"))
    order = vmlib.build_initramfs(
        root, {}, os.path.join(out, "initrd.cpio"),
        init=os.path.join(HERE, "initrd-init"),
        dirs=("bin", "dev", "proc", "sys", "newroot", "modules"),
        modules=MODULES)
    print(f"v2-root: initrd modules: {' '.join(order)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
