#!/bin/bash
# Runs test suites and prints one closing line: "tests: N passed, N failed,
# N skipped". Suites: unit (Criterion binaries; tests/scripts/, the lint
# checks on planted trees), fuzz (corpus replay),
# integration and vm (pytest; tests needing root, a memory cgroup, a JVM or
# qemu skip with a printed reason), cluster (a real single-node Kubernetes:
# builds or finds the cached node programs and the images first),
# cluster-v2 (a subset on the v2 node: cgroup v2 and the systemd driver in
# a qemu guest; skipped without qemu).
set -u
B=${B:-build}
export OOMLENS_BUILD=$(cd "$(dirname "$0")/.." && pwd)/$B
cd "$(dirname "$0")/.." || exit 2
passed=0 failed=0 skipped=0
suites=("$@")
[ "${suites[0]:-all}" = all ] && suites=(unit fuzz integration vm cluster cluster-v2)

add_counts() { # passed failed skipped
	passed=$((passed + $1)); failed=$((failed + $2)); skipped=$((skipped + $3))
}

run_criterion() { # dir label
	local t out syn rc p f s
	for t in "$1"/*; do
		[ -x "$t" ] || continue
		# --verbose for the [SKIP] lines and their reasons
		out=$("$t" --jobs 1 --verbose 2>&1); rc=$?
		syn=$(printf '%s\n' "$out" | grep -a 'Synthesis:' | tail -n1)
		if [ $rc -ne 0 ] || [ -z "$syn" ]; then
			printf '%s\n' "$out" | grep -av '^\[\(RUN \|PASS\)\]'
		fi
		printf '%s\n' "$out" | grep -a '^\[SKIP\]' | sed "s/^/$2: /"
		echo "$2: $(basename "$t"): ${syn:-no synthesis line (exit $rc)}"
		if [ -z "$syn" ]; then add_counts 0 1 0; continue; fi
		p=$(sed -n 's/.*Passing: \([0-9]*\).*/\1/p' <<<"$syn")
		f=$(sed -n 's/.*Failing: \([0-9]*\).*/\1/p' <<<"$syn")
		s=$(printf '%s\n' "$out" | grep -ac '^\[SKIP\]')
		add_counts "${p:-0}" "${f:-0}" "${s:-0}"
		[ $rc -ne 0 ] && [ "${f:-0}" = 0 ] && add_counts 0 1 0
	done
}

run_fuzz() {
	local t name
	for t in "$B"/fuzz/fuzz_*; do
		[ -x "$t" ] || continue
		name=$(basename "$t")
		if "$t" "tests/fuzz/corpus/${name#fuzz_}" >/tmp/oomlens-fuzz.$$ 2>&1; then
			echo "fuzz: $name: $(tail -n1 /tmp/oomlens-fuzz.$$)"
			add_counts 1 0 0
		else
			cat /tmp/oomlens-fuzz.$$
			echo "fuzz: $name: FAILED"
			add_counts 0 1 0
		fi
	done
	rm -f /tmp/oomlens-fuzz.$$
}

run_pytest() { # dir [more test files or ids]
	local dir=$1 log line p f s e
	compgen -G "$dir/test_*.py" >/dev/null || return 0
	log=$(mktemp)
	$PYTHON_BIN -m pytest -q -rs -p no:cacheprovider "$@" 2>&1 | tee "$log"
	line=$(grep -E '^(=+ )?[0-9]+ (passed|failed|skipped|error)' "$log" | tail -n1)
	p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+')
	f=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+')
	e=$(grep -oE '[0-9]+ errors?' <<<"$line" | grep -oE '[0-9]+')
	s=$(grep -oE '[0-9]+ skipped' <<<"$line" | grep -oE '[0-9]+')
	[ -z "$line" ] && f=1
	add_counts "${p:-0}" $(( ${f:-0} + ${e:-0} )) "${s:-0}"
	rm -f "$log"
}

PYTHON_BIN=${PYTHON:-python3}
# Debian's python3-pytest is installed for /usr/bin/python3; a python3 found
# earlier in PATH (pyenv here) does not see it.
[ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ] && PYTHON_BIN=/usr/bin/python3
# Can containerd's overlayfs snapshotter work where the node keeps its
# state? Not when that directory is itself on an overlay root (a nested
# container): prints why not and fails.
overlay_works() {
	local base=${OOMLENS_CLUSTER_DIR:-/var/lib/oomlens-cluster} t ok=1
	base=$(dirname "$base")
	[ "$(id -u)" -eq 0 ] || return 0 # the suite says why it skips
	t=$(mktemp -d "$base/.oomlens-overlay-probe.XXXXXX") || return 0
	mkdir "$t/l" "$t/u" "$t/w" "$t/m"
	if mount -t overlay overlay \
		-o "lowerdir=$t/l,upperdir=$t/u,workdir=$t/w" "$t/m" 2>"$t/err"; then
		umount "$t/m"
	else
		echo "overlayfs cannot be mounted on $base ($(head -c 200 "$t/err"))"
		ok=0
	fi
	rm -rf "$t"
	[ $ok -eq 1 ]
}

# Real OOM kills share one /dev/kmsg and the kernel's report rate limit per
# host: two copies of these suites (two clones, two worktrees) take turns.
realkill_lock() {
	[ -n "${OOMLENS_LOCKED:-}" ] && return 0
	exec 9>"${TMPDIR:-/tmp}/oomlens-realkill.lock"
	if ! flock -n 9; then
		echo "run-tests: waiting for another copy's real-kill suites"
		flock 9
	fi
	export OOMLENS_LOCKED=1
}

for s in "${suites[@]}"; do
	case $s in
	integration|vm|cluster) realkill_lock ;;
	esac
	case $s in
	unit) run_criterion "$B/tests" unit
		run_pytest tests/scripts ;; # the checks make lint runs, on planted trees
	fuzz) run_fuzz ;;
	integration) run_criterion "$B/itests" integration
		run_pytest tests/integration
		run_pytest tests/helm ;;
	vm) run_pytest tests/vm ;;
	cluster) if ! why=$(overlay_works); then
			# containerd stores images and container roots as
			# overlayfs snapshots: without it no pod runs.
			echo "cluster: SKIP: $why: the test node needs a host or a VM"
			add_counts 0 0 1
			continue
		fi
		if [ "$(id -u)" -eq 0 ]; then
			B=$B images/images.sh >/tmp/oomlens-images.$$ 2>&1 ||
				{ cat /tmp/oomlens-images.$$; add_counts 0 1 0; }
			grep '^images: .*goal' /tmp/oomlens-images.$$
			rm -f /tmp/oomlens-images.$$
		fi
		# A node left up (OOMLENS_CLUSTER_KEEP) may run another
		# checkout's images: the suite starts its own.
		[ -n "${OOMLENS_CLUSTER_KEEP:-}" ] ||
			B=$B tests/cluster/down.sh >/dev/null 2>&1 || true
		run_pytest tests/cluster ;;
	cluster-v2) # the v2 node (tests/cluster/v2/: cgroup v2, systemd
		# driver, in a qemu guest under TCG, so a subset): its own
		# tests, the C victim, the publish latency (3 kills) and the
		# injected JVM of the v1 suite, and the host check (which stops
		# the node)
		if ! command -v qemu-system-x86_64 >/dev/null; then
			echo "cluster-v2: SKIP: qemu-system-x86_64 not installed"
			add_counts 0 0 1
			continue
		fi
		if [ "$(id -u)" -eq 0 ]; then
			B=$B images/images.sh >/tmp/oomlens-images.$$ 2>&1 ||
				{ cat /tmp/oomlens-images.$$; add_counts 0 1 0; }
			rm -f /tmp/oomlens-images.$$
		fi
		[ -n "${OOMLENS_CLUSTER_KEEP:-}" ] ||
			B=$B tests/cluster/v2/down.sh >/dev/null 2>&1 || true
		export OOMLENS_NODE=v2
		run_pytest tests/cluster/v2 \
			tests/cluster/test_agent_node.py::test_c_victim_without_sidecar \
			tests/cluster/test_agent_node.py::test_publish_latency_beats_kubelet_status \
			tests/cluster/test_injector.py::test_oom_kill_of_injected_pod_has_snapshot \
			tests/cluster/test_host_unchanged.py
		unset OOMLENS_NODE ;;
	*) echo "run-tests: unknown suite '$s'" >&2; exit 2 ;;
	esac
done
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
