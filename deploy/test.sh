#!/usr/bin/env bash
# Builds the package with warnings as errors and runs the whole test suite (unit and real-process
# integration tests), then a short fuzz run of the protocol decoders (bench/fuzz.sh: 20 000
# executions from the seed messages, with the decoders' differential checks; LIFELINE_FUZZ_RUNS
# sets how many, 0 skips it). Installs libzmq3-dev first when it is missing and we are root, chromium
# with chromium-driver for the console's browser tests, and etcd-server for the broker group's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
ensure_prerequisites
ensure_browser
ensure_etcd
cd "$lifeline_root"
swift build --build-tests -Xswiftc -warnings-as-errors || { status=$?; echo "build failed (status $status)" >&2; exit "$status"; }
swift test --skip-build "$@"
fuzz_runs="${LIFELINE_FUZZ_RUNS:-20000}"
if [ "$fuzz_runs" != 0 ]; then bash bench/fuzz.sh "$fuzz_runs"; fi
