#!/usr/bin/python3
"""Captures real cgroup v2 OOM kills in the qemu guest as test fixtures.

For each case, boots the guest (tests/vm/prepare.sh first), runs a static
victim (guest/hog.c) in a memory cgroup until the kernel kills it, and
writes:
  tests/fixtures/kmsg/v2-6.1-<case>/kmsg.txt          raw /dev/kmsg records
                                                      from a marker record on
  tests/fixtures/cgroup/v2-6.1-<case>/root/...        cgroup files after the
                                                      kill (a --host-root tree)
  tests/fixtures/cgroup/v2-6.1-<case>-before/root/... the same before it
  README.md in each, victims.txt (the pids the guest recorded).
Usage: tests/vm/capture_v2.py [case...]
       (cases: single oomgroup pod-ctr pod-ctr-same hostile global)
"""

import datetime
import os
import shutil
import sys
import tempfile

import vmlib

FIXTURES = os.path.join(vmlib.REPO, "tests", "fixtures")

# Shell functions shared by every case (busybox sh in the guest).
LIB = r"""
set -u
CG=/sys/fs/cgroup
FILES="cgroup.controllers cgroup.subtree_control cgroup.procs cgroup.events
memory.current memory.max memory.high memory.low memory.min memory.peak
memory.events memory.events.local memory.stat memory.oom.group
memory.swap.current memory.swap.max memory.swap.events memory.pressure"
snap() { # label cgpath...
	label=$1; shift
	d=/out/$label/root/sys/fs/cgroup
	mkdir -p "$d" /out/$label/root/proc/self
	for f in cgroup.controllers cgroup.subtree_control memory.stat \
		memory.pressure; do cat $CG/$f >"$d/$f"; done
	cat /proc/self/mountinfo >/out/$label/root/proc/self/mountinfo
	for p in "$@"; do
		mkdir -p "$d$p"
		for f in $FILES; do
			[ -r "$CG$p/$f" ] && cat "$CG$p/$f" >"$d$p/$f"
		done
	done
	return 0
}
run_in() { # cgpath hog-args... ; background, $! = the hog's pid
	sh -c 'echo $$ >"$0"; exec /bin/hog "$@"' "$CG$1/cgroup.procs" \
		"$2" "${3:-}" >>/tmp/hog.log 2>&1 &
}
mark() { echo "oomlens-capture: $*" >/dev/kmsg; }
finish() { # save kmsg records from the first marker on
	sleep 0.3
	mkdir -p /out/kmsg
	timeout 1 cat /dev/kmsg >/tmp/kmsg.all
	awk '/oomlens-capture: start/ { on = 1 } on' /tmp/kmsg.all \
		>/out/kmsg/kmsg.txt
	cat /proc/version >/out/version
	grep -c 'Killed process' /out/kmsg/kmsg.txt
}
"""

CASES = {
    "single": r"""
mkdir $CG/demo
echo 32M >$CG/demo/memory.max
snap before /demo
mark start single
run_in /demo 0
victim=$!
echo "$victim hog /demo" >/out/victims.txt
wait $victim; st=$?
echo "victim $victim exit $st"
sleep 0.2
snap after /demo
mark end single
n=$(finish)
[ "$st" = 137 ] && [ "$n" -ge 1 ]
""",
    "oomgroup": r"""
mkdir $CG/demo
echo 32M >$CG/demo/memory.max
echo 1 >$CG/demo/memory.oom.group
run_in /demo 4 hold; h1=$!
run_in /demo 4 hold; h2=$!
sleep 0.5
snap before /demo
mark start oomgroup
run_in /demo 0; g=$!
printf '%s hog /demo holder\n%s hog /demo holder\n%s hog /demo grower\n' \
	$h1 $h2 $g >/out/victims.txt
wait $g; st=$?
wait $h1; s1=$?
wait $h2; s2=$?
echo "grower $g exit $st, holders $h1 exit $s1, $h2 exit $s2"
sleep 0.2
snap after /demo
mark end oomgroup
n=$(finish)
[ "$st" = 137 ] && [ "$s1" = 137 ] && [ "$s2" = 137 ] && [ "$n" -ge 3 ]
""",
    "hostile": r"""
mkdir -p "$CG/demo/a b,task=x"
echo 32M >$CG/demo/memory.max
echo +memory >$CG/demo/cgroup.subtree_control
snap before /demo "/demo/a b,task=x"
mark start hostile
HOG_COMM="$(printf 'evil) (x\nUID:9')" run_in "/demo/a b,task=x" 0
victim=$!
printf '%s evil) (x\\nUID:9 /demo/a b,task=x\n' $victim >/out/victims.txt
wait $victim; st=$?
echo "victim $victim exit $st"
sleep 0.2
snap after /demo "/demo/a b,task=x"
mark end hostile
n=$(finish)
[ "$st" = 137 ] && [ "$n" -ge 1 ]
""",
    "global": r"""
mark start global
run_in / 0
victim=$!
echo "$victim hog / (no memory cgroup limit)" >/out/victims.txt
wait $victim; st=$?
echo "victim $victim exit $st"
mark end global
n=$(finish)
[ "$st" = 137 ] && [ "$n" -ge 1 ]
""",
    "pod-ctr-same": r"""
mkdir $CG/pod
echo 32M >$CG/pod/memory.max
echo +memory >$CG/pod/cgroup.subtree_control
mkdir $CG/pod/pause $CG/pod/ctr
echo 32M >$CG/pod/ctr/memory.max
sh -c 'echo $$ >'$CG/pod/pause/cgroup.procs'; exec sleep 1000' &
pause=$!
sleep 0.2
snap before /pod /pod/pause /pod/ctr
mark start pod-ctr-same
run_in /pod/ctr 0
victim=$!
printf '%s hog /pod/ctr\n%s sleep /pod/pause (not killed)\n' $victim \
	$pause >/out/victims.txt
wait $victim; st=$?
echo "victim $victim exit $st"
sleep 0.2
snap after /pod /pod/pause /pod/ctr
mark end pod-ctr-same
n=$(finish)
kill $pause
[ "$st" = 137 ] && [ "$n" -ge 1 ]
""",
    "pod-ctr": r"""
mkdir $CG/pod
echo 32M >$CG/pod/memory.max
echo +memory >$CG/pod/cgroup.subtree_control
mkdir $CG/pod/pause $CG/pod/ctr
sh -c 'echo $$ >'$CG/pod/pause/cgroup.procs'; exec sleep 1000' &
pause=$!
sleep 0.2
snap before /pod /pod/pause /pod/ctr
mark start pod-ctr
run_in /pod/ctr 0
victim=$!
printf '%s hog /pod/ctr\n%s sleep /pod/pause (not killed)\n' $victim \
	$pause >/out/victims.txt
wait $victim; st=$?
echo "victim $victim exit $st"
sleep 0.2
snap after /pod /pod/pause /pod/ctr
mark end pod-ctr
n=$(finish)
kill $pause
[ "$st" = 137 ] && [ "$n" -ge 1 ]
""",
}

CASE_NOTES = {
    "single": "one static `hog` growing in /demo (memory.max=32M) until the "
              "memcg OOM killer kills it.",
    "oomgroup": "/demo with memory.max=32M and memory.oom.group=1; three "
                "tasks: two `hog 4 hold` (4 MiB each, then sleep) and one "
                "growing `hog`; the whole group is killed.",
    "pod-ctr-same": "like pod-ctr, but /pod/ctr has the same "
                    "memory.max=32M as /pod (a one-container pod whose "
                    "limit is the container's).",
    "hostile": "/demo holds memory.max=32M; the growing `hog` runs in the "
               "child cgroup `/demo/a b,task=x` (space and comma in the "
               "name) and renamed itself (PR_SET_NAME) to the 14 bytes "
               "`evil) (x<newline>UID:9`, which the kernel escapes as "
               "`\\x0a` in /dev/kmsg.",
    "global": "a global (not memcg) OOM: the growing `hog` in the root "
              "cgroup with no limit fills the guest's 512 MiB (no swap); "
              "CONSTRAINT_NONE, Mem-Info and the whole task list. No "
              "cgroup files were captured for this case.",
    "pod-ctr": "/pod holds memory.max=32M, with +memory in its "
               "subtree_control; /pod/ctr (no limit of its own) runs the "
               "growing `hog`, /pod/pause runs `sleep 1000`; the kernel "
               "blames the pod (oom_memcg=/pod, task_memcg=/pod/ctr).",
}


def readme(case, version, when, what):
    return f"""# cgroup v2, kernel 6.1 — {case}

Captured by tests/vm/capture_v2.py on {when} in the qemu test guest
(tests/vm/: TCG, 2 vCPUs, 512 MiB, no swap, busybox initramfs).

Kernel: `{version}`

Case: {CASE_NOTES[case]}

{what}

victims.txt lists the pids the guest script recorded (pid, comm, cgroup).
Nothing was edited by hand.
"""


def capture(case):
    with tempfile.TemporaryDirectory(prefix="oomlens-cap-") as out:
        os.chmod(out, 0o755)
        code, log = vmlib.run_guest(LIB + CASES[case], timeout=90,
                                    share_root=False, outdir=out)
        if code != 0:
            sys.stderr.write(log)
            raise SystemExit(f"capture {case}: guest exit {code}")
        with open(os.path.join(out, "version")) as f:
            version = f.read().strip()
        when = datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC")
        name = f"v2-6.1-{case}"
        kdir = os.path.join(FIXTURES, "kmsg", name)
        os.makedirs(kdir, exist_ok=True)
        shutil.copy(os.path.join(out, "kmsg", "kmsg.txt"), kdir)
        shutil.copy(os.path.join(out, "victims.txt"), kdir)
        with open(os.path.join(kdir, "README.md"), "w") as f:
            f.write(readme(case, version, when,
                           "kmsg.txt: the raw /dev/kmsg records "
                           "(`prio,seq,usec,flags;text`, continuation "
                           "lines as read) from the `oomlens-capture: start` "
                           "marker record to the end, read with "
                           "`cat /dev/kmsg` after the kill."))
        for label, suffix in (("after", ""), ("before", "-before")):
            if not os.path.isdir(os.path.join(out, label)):
                continue
            cdir = os.path.join(FIXTURES, "cgroup", name + suffix)
            shutil.rmtree(cdir, ignore_errors=True)
            shutil.copytree(os.path.join(out, label), cdir)
            shutil.copy(os.path.join(out, "victims.txt"), cdir)
            with open(os.path.join(cdir, "README.md"), "w") as f:
                f.write(readme(case, version, when,
                               f"root/ is the guest's cgroup2 files {label} "
                               "the kill (as a --host-root tree: "
                               "root/sys/fs/cgroup/<path>/<file>), plus "
                               "root/proc/self/mountinfo. The "
                               f"{'before' if label == 'after' else 'after'}"
                               f" state is in {name}"
                               f"{'-before' if label == 'after' else ''}/."))
        print(f"capture {case}: ok ({kdir})")


def main(argv):
    why = vmlib.unavailable()
    if why:
        raise SystemExit(f"capture: {why}")
    for case in argv[1:] or list(CASES):
        capture(case)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
