#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""mkinitrd.py ROOT OUT: the v2 node's boot files from a guest root that
holds Debian's kernel package unpacked (build-root.sh): OUT/vmlinux (the
uncompressed ELF: boots in seconds where the bzImage takes three times as
long under TCG) and OUT/initrd.cpio (busybox-static, initrd-init as /init,
the virtio-pci, virtio-blk and ext4 modules with their dependencies). The
cpio writer and the module resolution are tests/vm/vmlib.py's."""
import os
import shutil
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
    kver = os.listdir(os.path.join(root, "lib", "modules"))[0]
    found = vmlib._module_paths(os.path.join(root, "lib", "modules", kver))
    saved = vmlib.MODULES
    vmlib.MODULES = MODULES
    try:
        order = vmlib._module_order(found)
    finally:
        vmlib.MODULES = saved
    c = vmlib.Cpio()
    for d in ("bin", "dev", "proc", "sys", "newroot", "modules"):
        c.dir(d)
    c.chardev("dev/console", 5, 1)
    c.chardev("dev/null", 1, 3, 0o666)
    with open(shutil.which("busybox") or "/bin/busybox", "rb") as f:
        c.file("bin/busybox", f.read(), 0o755)
    c.symlink("bin/sh", "busybox")
    with open(os.path.join(HERE, "initrd-init"), "rb") as f:
        c.file("init", f.read(), 0o755)
    for name in order:
        with open(found[name], "rb") as f:
            c.file(f"modules/{name}.ko", f.read())
    c.file("modules/order", "".join(f"{n}.ko\n" for n in order).encode())
    with open(os.path.join(out, "initrd.cpio"), "wb") as f:
        f.write(c.bytes())
    print(f"v2-root: initrd modules: {' '.join(order)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
