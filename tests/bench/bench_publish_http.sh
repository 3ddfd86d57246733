#!/bin/bash
# Standalone publishing (--publish-url, docs/publish-http.md): kill -> the
# collector's 2xx over N real OOM kills (p50/p90/max), and what publishing
# costs the agent: its peak RSS and CPU over the same number of kills
# without --publish-url and with it, in one run. The collector is
# tests/integration/test_publish_http.py's (HTTPS on 127.0.0.1, a CA made
# for the run). Needs root and a memory cgroup controller; says why and
# passes where it cannot run.
#   OOMLENS_PUBLISH_KILLS   kills per agent (default 20)
set -euo pipefail
cd "$(dirname "$0")/../.."
exec /usr/bin/python3 tests/bench/publish_http.py "${OOMLENS_PUBLISH_KILLS:-20}"
