#!/bin/bash
# Detection latency: the agent's CLOCK_MONOTONIC at capture minus the kmsg
# timestamp of the "Killed process" record, over N real OOM kills.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec /usr/bin/python3 tests/bench/latency.py "${LATENCY_KILLS:-25}"
