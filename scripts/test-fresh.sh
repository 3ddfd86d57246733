#!/bin/bash
# make test-fresh: the newcomer's check. A clean clone of HEAD, alone, in a
# pristine Debian 12 (bookworm) root filesystem run by podman as a
# privileged container: `make demo` must name each victim with a verdict
# and sane figures, `make test` must end with 0 failed. Not part of
# `make test` (it installs everything from the network into a new system).
#
# Needs root on the host, mmdebstrap, podman, runc and slirp4netns (podman
# installs it only as a recommendation; installed with
# apt-get when missing). Everything it keeps is under $B/fresh/:
#   rootfs.tar      mmdebstrap --variant=minbase bookworm (made once; delete
#                   it, or FRESH_REBUILD=1, to make it again)
#   containers.conf podman's settings for this host, given through
#                   CONTAINERS_CONF (the host's /etc is left alone)
#   clone/          the clone of HEAD, the only host path the container sees
#   *.log           each phase's output; times.txt the seconds of each
#
# FRESH_UNTIL=demo | test-build | test (default): the last phase to run.
# Phases that OOM-kill for real (demo, test) hold the host's real-kill lock,
# as scripts/run-tests.sh does: one /dev/kmsg per host.
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
B=${B:-build}
F=$TOP/$B/fresh
UNTIL=${FRESH_UNTIL:-test}
IMAGE=localhost/oomlens-fresh:bookworm
LOCK=${TMPDIR:-/tmp}/oomlens-realkill.lock
CTR=oomlens-fresh-$$
mkdir -p "$F"
: >"$F/times.txt"

die() {
	echo "fresh: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "needs root (podman --privileged, mmdebstrap)"
case $UNTIL in demo | test-build | test) ;; *) die "FRESH_UNTIL=$UNTIL?" ;; esac

# phase [-k] NAME CMD...: runs CMD, output to $F/NAME.log, and records its
# time; a failure ends the run unless -k (the log is judged after).
phase() {
	local keep="" name t0 t1 rc=0 wait_s
	[ "$1" = -k ] && keep=1 && shift
	name=$1
	shift
	echo "fresh: $name ..." >&2
	t0=$(date +%s)
	"$@" >"$F/$name.log" 2>&1 || rc=$?
	t1=$(date +%s)
	wait_s=$(sed -n 's/^fresh: waited \([0-9]*\) s for the real-kill lock$/\1/p' "$F/$name.log")
	printf '%-12s %5d s  exit %d%s\n' "$name" $((t1 - t0 - ${wait_s:-0})) $rc \
		"${wait_s:+ (after $wait_s s waiting for the lock)}" | tee -a "$F/times.txt" >&2
	if [ $rc -ne 0 ] && [ -z "$keep" ]; then
		tail -n 40 "$F/$name.log" >&2
		die "$name failed (exit $rc); the whole output is in $F/$name.log"
	fi
}

host_tools() {
	local missing="" p
	for p in mmdebstrap podman runc slirp4netns; do
		command -v "$p" >/dev/null || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	apt-get update -qq
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $missing
}

# What `docker run debian:bookworm` gives too: the minbase variant (the
# Essential set and apt), with the release's updates and security
# suites, from mmdebstrap's default mirror.
rootfs() {
	rm -f "$F/rootfs.tar.tmp"
	mmdebstrap --variant=minbase --format=tar bookworm "$F/rootfs.tar.tmp"
	mv "$F/rootfs.tar.tmp" "$F/rootfs.tar"
}

# runc and cgroupfs: crun refuses this kind of host's hybrid cgroup v1
# layout; the file events log needs no journald; podman's default open
# files limit is above what root may set in this sandbox.
write_conf() {
	cat >"$F/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
}

image() {
	local stamp
	stamp=$(stat -c '%Y %s' "$F/rootfs.tar")
	if podman image exists "$IMAGE" &&
		[ "$(cat "$F/image.stamp" 2>/dev/null)" = "$stamp" ]; then
		echo "image $IMAGE is current"
		return 0
	fi
	podman import -q "$F/rootfs.tar" "$IMAGE"
	echo "$stamp" >"$F/image.stamp"
}

# A clone of the committed HEAD: what a newcomer gets. Its origin (a path
# on this host) is removed so that nothing inside points outside.
clone() {
	rm -rf "$F/clone"
	git clone -q --no-hardlinks "$TOP" "$F/clone"
	git -C "$F/clone" checkout -q --detach "$COMMIT"
	git -C "$F/clone" remote remove origin
	git -C "$F/clone" log -1 --format='clone at %h %s'
}

# slirp4netns: user-mode networking, enough for apt-get and npm, and it
# needs no bridge, iptables rule or sysctl on the host (podman's default
# CNI bridge would add NAT rules). Nothing but the clone is mounted.
start() {
	local crt
	# --pid=host: the kernel's OOM report names pids of the initial pid
	# namespace, and the tests compare them with the pids they started;
	# in a pid namespace of its own the agent reports the kernel's pids
	# (and says so at start), which no test process there can know.
	podman run -d --name "$CTR" --privileged --network slirp4netns --pid=host \
		--env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		--env HOME=/root --env DEBIAN_FRONTEND=noninteractive \
		-v "$F/clone:/src" -w /src "$IMAGE" sleep infinity
	# The container reaches the network through the host, so it trusts
	# what the host trusts beyond Debian's CAs (a TLS-inspecting proxy's
	# CA, say): the local certificates are copied, not mounted, and
	# ca-certificates adds them when apt installs it.
	for crt in /usr/local/share/ca-certificates/*.crt; do
		[ -e "$crt" ] || continue
		podman exec "$CTR" mkdir -p /usr/local/share/ca-certificates
		podman cp "$crt" "$CTR:/usr/local/share/ca-certificates/"
		echo "trusting the host's $(basename "$crt")"
	done
}

in_ctr() { podman exec "$CTR" bash -c "$1"; }
# The wait for the lock is logged apart: it is other checkouts' time.
locked() {
	local t0
	t0=$(date +%s)
	flock "$LOCK" bash -c 'echo "fresh: waited $(($(date +%s) - $1)) s for the real-kill lock"
		exec podman exec "$2" bash -c "$3"' sh "$t0" "$CTR" "$1"
}


# check demo|test LOG: what a newcomer must see.
#   demo: for every victim, "killed pid <number> (<comm>)", a verdict line,
#   and no figure above twice the victim's limit (none negative); the seed
#   victims get their known verdicts.
#   test: the closing "tests: N passed, 0 failed" and no skip for want of
#   kubectl or of a file the clone should hold.
check() {
	python3 - "$@" <<'PY'
import re, sys

what, path = sys.argv[1], sys.argv[2]
text = open(path, errors="replace").read()
bad = []
UNIT = {"B": 1, "kB": 1 << 10, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
        "TiB": 1 << 40}
if what == "demo":
    expect = {"retention": "glibc-retention", "jvm": "java-heap",
              "python": "python-heap"}
    blocks = re.split(r"(?m)^(?=demo: victim ')", text)[1:]
    if len(blocks) < 3:
        bad.append("%d victims ran, 3 expected (hog, retention, jvm)" % len(blocks))
    for b in blocks:
        m = re.match(r"demo: victim '([^']+)'.*limit (\d+) MiB", b)
        name, limit = m.group(1), int(m.group(2)) << 20
        k = re.search(r"(?m)^demo: killed pid (\S+) \((.*?)\) in \S+, (\S+) kB anon", b)
        if not k or not k.group(1).isdigit() or k.group(2) in ("", "None"):
            bad.append("%s: no victim named (%s)" % (name, k.group(0) if k else "no kill line"))
        elif not k.group(3).isdigit() or int(k.group(3)) << 10 > 2 * limit:
            bad.append("%s: anon %s kB for a %d MiB limit" % (name, k.group(3), limit >> 20))
        v = re.search(r"(?m)^demo: verdict: (\S+) . (.*)$", b)
        if not v:
            bad.append("%s: no verdict" % name)
            continue
        if name in expect and v.group(1) != expect[name]:
            bad.append("%s: verdict %s, expected %s" % (name, v.group(1), expect[name]))
        for num, unit in re.findall(r"(-?[\d.]+) (B|kB|KiB|MiB|GiB|TiB)\b", v.group(2)):
            n = float(num) * UNIT[unit]
            if n < 0 or n > 2 * limit:
                bad.append("%s: '%s %s' in '%s' (limit %d MiB)"
                           % (name, num, unit, v.group(2), limit >> 20))
        print("fresh: demo %s: pid %s (%s), %s" % (name, k.group(1) if k else "?",
              k.group(2) if k else "?", v.group(1)))
else:
    lines = re.findall(r"(?m)^tests: (\d+) passed, (\d+) failed, (\d+) skipped$", text)
    if not lines:
        bad.append("no closing 'tests: N passed, N failed, N skipped' line")
    else:
        p, f, s = map(int, lines[-1])
        print("fresh: test: %d passed, %d failed, %d skipped" % (p, f, s))
        if f:
            bad.append("%d failed" % f)
    for line in text.splitlines():
        if re.search(r"SKIP", line) and re.search(r"kubectl|not found at|no such file", line, re.I):
            bad.append("skip: " + line.strip())
for b in bad:
    print("fresh: %s: %s" % (what, b), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

cleanup() { podman rm -f -t 0 "$CTR" >/dev/null 2>&1 || true; }

COMMIT=$(git rev-parse HEAD)
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	echo "fresh: uncommitted changes are not tested: the clone is of HEAD $COMMIT" >&2
export CONTAINERS_CONF=$F/containers.conf

phase host-tools host_tools
if [ -n "${FRESH_REBUILD:-}" ] || [ ! -s "$F/rootfs.tar" ]; then
	phase rootfs rootfs
fi
write_conf
phase image image
phase clone clone
trap cleanup EXIT
phase start start
# A pristine Debian has no make: the one thing a newcomer installs by hand.
phase bootstrap in_ctr "apt-get update -qq && apt-get install -y -qq --no-install-recommends make"
phase demo-deps in_ctr "make deps DEPS=demo"
# Built with warnings as errors, as CI's tier 1 builds (make does not rebuild
# for other flags, so the first build is the one that must be strict).
phase demo-build in_ctr "CI=true make -j2 all"
# A demo that does not pass is reported, and the tests still run: both
# verdicts are worth having from one (long) run.
result=0
phase -k demo locked "make demo"
check demo "$F/demo.log" || { echo "fresh: demo FAILED: see $F/demo.log" >&2; result=1; }
[ "$UNTIL" = demo ] && exit $result

phase test-deps in_ctr "make deps DEPS=test"
# The test binaries, built outside the lock, as strictly.
phase test-build in_ctr 'CI=true make -j2 all $(for f in tests/unit/test_*.c; do b=${f#tests/unit/}; echo build/tests/${b%.c}; done) $(for f in tests/integration/itest_*.c; do b=${f#tests/integration/}; echo build/itests/${b%.c}; done) $(for f in tests/fuzz/fuzz_*.c; do b=${f#tests/fuzz/}; echo build/fuzz/${b%.c}; done)'
[ "$UNTIL" = test-build ] && exit $result
phase -k test locked "make test"
check test "$F/test.log" || { echo "fresh: test FAILED: see $F/test.log" >&2; result=1; }
[ $result -eq 0 ] && echo "fresh: passed; times in $F/times.txt" >&2
exit $result
