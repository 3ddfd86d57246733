#!/bin/bash
# kill -> OOMReport visible in the API (a watch on oomreports) beside kill
# -> the kubelet's OOMKilled status, p50/p99 over 20 real kills on the test
# node (tests/cluster: the chart installed with helm), and the agent's RSS
# and CPU there. Needs root and a host where the node runs (overlayfs);
# says why and passes where it cannot run.
set -u
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "publish: skipped (needs root)"; exit 0; }
[ -x "${OOMLENS_BUILD:-build}/tools/bin/helm" ] ||
	{ echo "publish: skipped (no helm: make deps DEPS=test)"; exit 0; }
B=${B:-build} images/images.sh >/dev/null 2>&1 ||
	{ echo "publish: make images failed"; exit 1; }
out=$(OOMLENS_LATENCY_KILLS=${OOMLENS_LATENCY_KILLS:-20} /usr/bin/python3 -m pytest \
	-q -s -p no:cacheprovider tests/cluster/test_agent_node.py \
	-k publish_latency 2>&1)
rc=$?
grep '^latency:' <<<"$out" | sed 's/^latency: /publish: /'
if [ $rc -ne 0 ]; then
	grep -q "needs a host or a VM\|skipped" <<<"$out" && ! grep -q failed <<<"$out" &&
		{ echo "publish: skipped: $(grep -o 'SKIP.*' <<<"$out" | head -1)"; exit 0; }
	tail -n 30 <<<"$out"
	exit 1
fi
