#!/bin/bash
# kill -> OOMReport visible in the API (a watch on oomreports) beside kill
# -> the kubelet's OOMKilled status, p50/p99 over 20 real kills on each
# test node in one run (tests/cluster: the chart installed with helm): the
# v1 node (cgroup v1, cgroupfs driver, this host) and, where qemu is
# installed, the v2 node (cgroup v2, systemd driver, a qemu guest under
# TCG: absolute times are slow there, the ratio is what compares), and the
# agent's RSS and CPU on each. Needs root and a host where the node runs
# (overlayfs); says why and passes where it cannot run.
#   OOMLENS_LATENCY_KILLS   kills per node (default 20)
#   OOMLENS_BENCH_NODES     the nodes, in order (default "v1 v2")
set -u
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "publish: skipped (needs root)"; exit 0; }
[ -x "${OOMLENS_BUILD:-build}/tools/bin/helm" ] ||
	{ echo "publish: skipped (no helm: make deps DEPS=test)"; exit 0; }
B=${B:-build} images/images.sh >/dev/null 2>&1 ||
	{ echo "publish: make images failed"; exit 1; }
rc=0
for node in ${OOMLENS_BENCH_NODES:-v1 v2}; do
	if [ "$node" = v2 ] && ! command -v qemu-system-x86_64 >/dev/null; then
		echo "publish: v2 skipped (no qemu-system-x86_64)"
		continue
	fi
	out=$(OOMLENS_NODE=$([ "$node" = v2 ] && echo v2) \
		OOMLENS_LATENCY_KILLS=${OOMLENS_LATENCY_KILLS:-20} \
		/usr/bin/python3 -m pytest -q -s -p no:cacheprovider \
		tests/cluster/test_agent_node.py -k publish_latency 2>&1)
	r=$?
	grep '^latency:' <<<"$out" | sed 's/^latency: /publish: /'
	if [ $r -ne 0 ]; then
		if grep -q "needs a host or a VM\|skipped" <<<"$out" && ! grep -q failed <<<"$out"; then
			echo "publish: $node skipped: $(grep -o 'SKIP.*' <<<"$out" | head -1)"
		else
			tail -n 30 <<<"$out"
			rc=1
		fi
	fi
done
exit $rc
