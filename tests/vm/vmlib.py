"""oomlens VM harness: Debian's 6.1 kernel in qemu (TCG) with cgroup v2.

prepare.sh fetches the kernel package and calls `python3 vmlib.py prepare`,
which extracts the uncompressed vmlinux and builds the base initramfs
(busybox-static, guest/init, the static helpers, virtio/9p modules).
run_guest() appends a small cpio holding the test script to that initramfs,
boots it and returns the script's exit code and the serial log.

Paths come from this file's location (CI clones the repository elsewhere),
OOMLENS_BUILD (exported by scripts/run-tests.sh) and OOMLENS_VM_CACHE.
"""

import lzma
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CACHE = os.environ.get("OOMLENS_VM_CACHE") or os.path.join(HERE, "cache")
VMLINUX = os.path.join(CACHE, "vmlinux")
INITRD = os.path.join(CACHE, "initrd.cpio")
KVER_FILE = os.path.join(CACHE, "kernel-version")
QEMU = "qemu-system-x86_64"

# Modules for the 9p shares, in load order (dependencies first).
MODULES = ["virtio", "virtio_ring", "virtio_pci_modern_dev",
           "virtio_pci_legacy_dev", "virtio_pci", "netfs", "fscache",
           "9pnet", "9pnet_virtio", "9p"]

EXIT_NO_DEBUG_EXIT = -1  # qemu ended without isa-debug-exit (panic, reboot)
EXIT_TIMEOUT = -2        # the guest ran past its timeout and was killed


def build_dir():
    """The build directory: $OOMLENS_BUILD, else <repo>/build."""
    return os.environ.get("OOMLENS_BUILD") or os.path.join(REPO, "build")


# ---------------------------------------------------------------- vmlinux

def extract_vmlinux(vmlinuz, out):
    """Finds the xz/gzip payload in a bzImage, writes the ELF to out."""
    with open(vmlinuz, "rb") as f:
        data = f.read()
    for magic, kind in ((b"\xfd7zXZ\x00", "xz"), (b"\x1f\x8b\x08", "gz")):
        pos = data.find(magic)
        while pos >= 0:
            elf = _try_decompress(data[pos:], kind)
            if elf is not None and elf[:4] == b"\x7fELF":
                tmp = out + ".tmp"
                with open(tmp, "wb") as f:
                    f.write(elf)
                os.rename(tmp, out)
                return len(elf)
            pos = data.find(magic, pos + 1)
    raise RuntimeError(f"no compressed ELF payload found in {vmlinuz}")


def _try_decompress(buf, kind):
    try:
        if kind == "xz":
            return lzma.LZMADecompressor().decompress(buf)
        import zlib
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(buf)
    except (lzma.LZMAError, ValueError, EOFError):
        return None
    except Exception:  # zlib.error
        return None


# ---------------------------------------------------------------- cpio

class Cpio:
    """A cpio "newc" archive built in memory (what the kernel unpacks)."""

    def __init__(self):
        self.parts = []
        self.ino = 1000
        self.seen = set()

    def _entry(self, name, mode, data=b"", rdev=(0, 0)):
        self.ino += 1
        namez = name.encode() + b"\0"
        hdr = "070701" + "".join(f"{v:08x}" for v in (
            self.ino, mode, 0, 0, 1, 0, len(data), 0, 0,
            rdev[0], rdev[1], len(namez), 0))
        blob = hdr.encode() + namez
        blob += b"\0" * (-len(blob) % 4) + data
        blob += b"\0" * (-len(blob) % 4)
        self.parts.append(blob)

    def dir(self, name):
        parts = name.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            if d and d not in self.seen:
                self.seen.add(d)
                self._entry(d, 0o040755)

    def file(self, name, data, mode=0o644):
        name = name.strip("/")
        self.dir(os.path.dirname(name))
        self._entry(name, 0o100000 | mode, data)

    def symlink(self, name, target):
        name = name.strip("/")
        self.dir(os.path.dirname(name))
        self._entry(name, 0o120777, target.encode())

    def chardev(self, name, major, minor, mode=0o600):
        name = name.strip("/")
        self.dir(os.path.dirname(name))
        self._entry(name, 0o020000 | mode, rdev=(major, minor))

    def bytes(self):
        self._entry("TRAILER!!!", 0)
        out = b"".join(self.parts)
        return out + b"\0" * (-len(out) % 512)


# ---------------------------------------------------------------- prepare

def _module_paths(moddir):
    found = {}
    for root, _dirs, files in os.walk(moddir):
        for fn in files:
            if fn.endswith(".ko"):
                found[fn[:-3].replace("-", "_")] = os.path.join(root, fn)
    return found


def _module_depends(path):
    with open(path, "rb") as f:
        m = re.search(rb"(?:^|\0)depends=([^\0]*)\0", f.read())
    return [d for d in m.group(1).decode().split(",") if d] if m else []


def _module_order(found, modules=None):
    """modules (MODULES when None) plus their dependencies, dependencies
    first."""
    order = []

    def visit(name, depth=0):
        if name in order or depth > 20:
            return
        if name not in found:
            raise RuntimeError(f"kernel module {name} not in the package")
        for dep in _module_depends(found[name]):
            visit(dep.replace("-", "_"), depth + 1)
        order.append(name)

    for name in MODULES if modules is None else modules:
        if name in found:
            visit(name)
    return order


GUEST_DIRS = ("bin", "dev", "proc", "sys", "tmp", "run", "host", "out",
              "mnt", "modules", "oomlens")


def build_initramfs(rootfs, helpers, out, init=None, dirs=GUEST_DIRS,
                    modules=None):
    """Writes the base initramfs: busybox, /init (guest/init when None),
    helpers, the kernel modules (MODULES when None) of rootfs's kernel
    package. Returns the modules in load order."""
    c = Cpio()
    for d in dirs:
        c.dir(d)
    c.chardev("dev/console", 5, 1)
    c.chardev("dev/null", 1, 3, 0o666)
    with open(shutil.which("busybox") or "/bin/busybox", "rb") as f:
        c.file("bin/busybox", f.read(), 0o755)
    c.symlink("bin/sh", "busybox")
    with open(init or os.path.join(HERE, "guest", "init"), "rb") as f:
        c.file("init", f.read(), 0o755)
    for name, path in helpers.items():
        with open(path, "rb") as f:
            c.file("bin/" + name, f.read(), 0o755)
    moddirs = [os.path.join(rootfs, "lib/modules", v)
               for v in os.listdir(os.path.join(rootfs, "lib/modules"))]
    found = _module_paths(moddirs[0])
    order = _module_order(found, modules)
    for name in order:
        with open(found[name], "rb") as f:
            c.file(f"modules/{name}.ko", f.read())
    c.file("modules/order", "".join(f"{n}.ko\n" for n in order).encode())
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(c.bytes())
    os.rename(tmp, out)
    return order


def prepare(rootfs, helpers):
    """Extracts vmlinux (once) and rebuilds the base initramfs."""
    vmlinuz = [os.path.join(rootfs, "boot", n)
               for n in os.listdir(os.path.join(rootfs, "boot"))
               if n.startswith("vmlinuz-")][0]
    if not os.path.exists(VMLINUX):
        size = extract_vmlinux(vmlinuz, VMLINUX)
        print(f"vm: extracted {VMLINUX} ({size >> 20} MiB)")
    with open(KVER_FILE, "w") as f:
        f.write(os.path.basename(vmlinuz)[len("vmlinuz-"):] + "\n")
    order = build_initramfs(rootfs, helpers, INITRD)
    print(f"vm: built {INITRD} ({os.path.getsize(INITRD) >> 10} KiB, "
          f"modules: {' '.join(order)})")


# ---------------------------------------------------------------- run

def unavailable():
    """Why no guest can run here, or None when everything is in place."""
    if not shutil.which(QEMU):
        return f"{QEMU} not installed (make deps)"
    for path in (VMLINUX, INITRD):
        if not os.path.exists(path):
            return f"{path} missing (tests/vm/prepare.sh failed?)"
    return None


def _script_cpio(script_text, env):
    c = Cpio()
    c.file("oomlens/test.sh", script_text.encode(), 0o755)
    lines = "".join(f"export {k}='{v}'\n" for k, v in env.items())
    c.file("oomlens/env", lines.encode())
    return c.bytes()


def qemu_argv(initrd, serial_log, share_root, outdir):
    argv = [QEMU, "-accel", "tcg,thread=multi", "-cpu", "max", "-smp", "2",
            "-m", "512M", "-M", "pc", "-nodefaults", "-no-reboot",
            "-display", "none", "-serial", f"file:{serial_log}",
            "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
            "-kernel", VMLINUX, "-initrd", initrd,
            "-append", "console=ttyS0 rdinit=/init panic=-1 quiet tsc=reliable"]
    if share_root:
        argv += ["-virtfs", "local,path=/,mount_tag=hostroot,"
                 "security_model=none,readonly=on,multidevs=remap"]
    if outdir:
        argv += ["-virtfs", f"local,path={outdir},mount_tag=out,"
                 "security_model=none,multidevs=remap"]
    return argv


def run_guest(script_text, timeout=60, share_root=True, outdir=None,
              env=None):
    """Boots the guest, runs script_text under busybox sh as root.

    Returns (exit_code, serial_log): exit_code is the script's status
    (0..127), EXIT_NO_DEBUG_EXIT if the guest panicked or rebooted,
    EXIT_TIMEOUT if it ran longer than timeout seconds (qemu is killed).
    With share_root the host's / is at /host in the guest (read-only,
    prepared as a chroot: `chroot /host CMD`). outdir (a host folder) is
    writable at /out and, in the chroot, at /tmp/out. env: extra variables
    exported to the script. Blocks until the guest ends.
    """
    genv = {"OOMLENS_REPO": REPO, "OOMLENS_BUILD": build_dir(),
            "OOMLENS_SHARE_ROOT": "1" if share_root else "0",
            "OOMLENS_SHARE_OUT": "1" if outdir else "0"}
    genv.update(env or {})
    with tempfile.TemporaryDirectory(prefix="oomlens-vm-") as tmp:
        initrd = os.path.join(tmp, "initrd")
        with open(INITRD, "rb") as src, open(initrd, "wb") as dst:
            shutil.copyfileobj(src, dst)
            dst.write(_script_cpio(script_text, genv))
        log = os.path.join(tmp, "serial.log")
        argv = qemu_argv(initrd, log, share_root, outdir)
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        try:
            out, _ = proc.communicate(timeout=timeout)
            rc = proc.returncode
            code = rc >> 1 if rc & 1 else EXIT_NO_DEBUG_EXIT
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            code = EXIT_TIMEOUT
        serial = ""
        if os.path.exists(log):
            with open(log, "rb") as f:
                serial = f.read().decode("utf-8", "replace")
        if out:
            serial += "\n[qemu] " + out.decode("utf-8", "replace")
        return code, serial


def main(argv):
    if len(argv) >= 3 and argv[1] == "prepare":
        helpers = dict(a.split("=", 1) for a in argv[3:])
        prepare(argv[2], helpers)
        return 0
    if len(argv) >= 2 and argv[1] == "run":
        script = sys.stdin.read()
        t0 = time.monotonic()
        code, log = run_guest(script, timeout=120)
        sys.stdout.write(log)
        print(f"\nvm: exit {code} after {time.monotonic() - t0:.1f} s")
        return 0 if code == 0 else 1
    print("usage: vmlib.py prepare ROOTFS name=PATH... | run < script.sh",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
