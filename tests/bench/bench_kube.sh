#!/bin/bash
# bench_kube: kube client numbers — decode throughput of a 10,000 pod-event
# watch stream (events/s, peak RSS) and the client's RSS while holding a
# watch on 500 pods served by the fake API server (tests/fakeapi). < 30 s.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${B:-build}
make -s B="$B" "$B/liboomlens.a" >/dev/null || exit 1
mkdir -p "$B/bench"
bin=$B/bench/bench_kube
${CC:-cc} -std=gnu11 -O2 -D_GNU_SOURCE -Icommon -o "$bin" \
	tests/bench/bench_kube.c "$B/liboomlens.a" \
	$(make -s --no-print-directory print-PROG_LIBS) || exit 1
rc=0
"$bin" decode 10000 || rc=1

tmp=$(mktemp -d /tmp/oomlens-bench-kube-XXXXXX)
python3 tests/fakeapi/fakeapi.py --port 0 --tls-dir "$tmp/tls" \
	--ready-file "$tmp/ready" --control-file "$tmp/control" \
	>"$tmp/log" 2>&1 &
fake=$!
trap 'kill $fake 2>/dev/null; wait $fake 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -s "$tmp/ready" ] && break; sleep 0.1; done
if [ ! -s "$tmp/ready" ]; then
	echo "kube hold: skipped (fake API server did not start: $(tail -n1 "$tmp/log"))"
	exit $rc
fi
"$bin" hold 500 "https://127.0.0.1:$(cat "$tmp/ready")" "$tmp/tls/ca.crt" || rc=1
exit $rc
