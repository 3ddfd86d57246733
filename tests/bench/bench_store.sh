#!/bin/bash
# bench_store: what oomlens's objects cost a real kube-apiserver and etcd
# (the test node's, docs/cluster.md), on an API server of its own (its own
# state directory and ports, purged after; the test node is not touched).
# Reports and bundles created by the publisher's calls (bench_store.c) with
# random data (the worst case), at the bundle budget and at the most one
# object may hold; then N simulated agents' pod watches (watchers.py).
# Prints per step: the API server's RSS, etcd's database size, `kubectl
# get oomreports -A`'s time, and a list of all bundles from the watch
# cache (an informer's initial list): its bytes, time and the API server's
# peak RSS while serving it. Needs root and the node's cache (make node).
# N (1000), BUDGET (256Ki), WATCHERS (1000) from the environment.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${B:-build}
N=${N:-1000}
BUDGET=${BUDGET:-256Ki}
WATCHERS=${WATCHERS:-1000}
export OOMLENS_CLUSTER_DIR=/var/lib/oomlens-bench-store
export OOMLENS_API_PORT=16443 OOMLENS_ETCD_PORT=22379
KUBECTL=$B/tools/bin/kubectl
[ "$(id -u)" = 0 ] || { echo "bench_store: skipped (needs root)"; exit 0; }
[ -x "$KUBECTL" ] || { echo "bench_store: skipped (no $KUBECTL: make deps DEPS=test)"; exit 0; }
ls -d "${OOMLENS_KUBE_CACHE:-/var/cache/oomlens}"/kube-*/bin >/dev/null 2>&1 ||
	{ echo "bench_store: skipped (no node build: make node)"; exit 0; }
make -s B="$B" "$B/liboomlens.a" >/dev/null || exit 1
mkdir -p "$B/bench"
bin=$B/bench/bench_store
${CC:-cc} -std=gnu11 -O2 -D_GNU_SOURCE -Icommon -o "$bin" \
	tests/bench/bench_store.c "$B/liboomlens.a" $(make -s --no-print-directory print-PROG_LIBS) || exit 1
RUN=$OOMLENS_CLUSTER_DIR

up() {
	tests/cluster/down.sh --purge >/dev/null 2>&1
	KC=$(tests/cluster/up.sh --apiserver-only 2>/dev/null | tail -n1)
	[ -s "$KC" ] || { echo "bench_store: the API server did not start"; exit 1; }
	"$KUBECTL" --kubeconfig "$KC" apply -f manifests/crds/ >/dev/null || exit 1
	for _ in $(seq 30); do
		"$KUBECTL" --kubeconfig "$KC" get oombundles -A >/dev/null 2>&1 && break
		sleep 1
	done
	API=$(awk '{print $1; exit}' "$RUN/pids/kube-apiserver.pid")
}
trap 'tests/cluster/down.sh --purge >/dev/null 2>&1' EXIT

mib() { awk -v k="$1" '$1 == k":" {printf "%.0f", $2 / 1024}' "/proc/$API/status"; }
db_mb() {
	curl -fsS "http://127.0.0.1:$OOMLENS_ETCD_PORT/metrics" |
		awk '$1 == "etcd_mvcc_db_total_size_in_bytes" {printf "%.0f", $2 / 1e6}'
}
now() { date +%s.%N; }

measure() { # what
	local t0 t1 bytes
	sleep 5 # the watch cache has caught up
	printf '%-34s apiserver RSS %5s MiB, etcd db %4s MB; ' "$1" "$(mib VmRSS)" "$(db_mb)"
	t0=$(now)
	"$KUBECTL" --kubeconfig "$KC" get oomreports -A --no-headers | wc -l >/dev/null
	t1=$(now)
	printf 'get oomreports -A %.2f s; ' "$(echo "$t1 - $t0" | bc)"
	echo 5 >"/proc/$API/clear_refs" # VmHWM from here
	t0=$(now)
	bytes=$("$KUBECTL" --kubeconfig "$KC" get --raw \
		'/apis/oomlens.io/v1alpha1/oombundles?resourceVersion=0' | wc -c)
	t1=$(now)
	printf 'list of bundles %.0f MiB in %.1f s, apiserver peak %s MiB\n' \
		"$(echo "$bytes / 1048576" | bc)" "$(echo "$t1 - $t0" | bc)" "$(mib VmHWM)"
}

fill() { # ns n size first
	"$KUBECTL" --kubeconfig "$KC" create namespace "$1" >/dev/null 2>&1
	"$bin" "$KC" "$1" "$2" "$3" "${4:-0}" || exit 1
}

echo "== budget $BUDGET: $N kills"
up
measure "empty"
fill budget $((N * 3 / 10)) "$BUDGET"
measure "$((N * 3 / 10)) x $BUDGET"
fill budget $((N - N * 3 / 10)) "$BUDGET" $((N * 3 / 10))
measure "$N x $BUDGET"

echo "== pod watches of $WATCHERS simulated agents (spec.nodeName)"
before=$(mib VmRSS)
token=$(awk -F, '$2 == "admin" {print $1}' "$RUN/pki/tokens.csv")
coproc W { python3 tests/bench/watchers.py "https://127.0.0.1:$OOMLENS_API_PORT" \
	"$RUN/pki/ca.crt" "$token" "$WATCHERS" bench-node-; }
read -r line <&"${W[0]}"
echo "$line"
sleep 5
echo "apiserver RSS $before MiB before, $(mib VmRSS) MiB with the watches"
eval "exec ${W[1]}>&-"
wait "$W_PID" 2>/dev/null

echo "== no budget: $((N * 3 / 10)) kills of 900Ki"
up
fill full $((N * 3 / 10)) 900Ki
measure "$((N * 3 / 10)) x 900Ki"
