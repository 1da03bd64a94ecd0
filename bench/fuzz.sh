#!/usr/bin/env bash
# Fuzzes the protocol decoders (frames, headers, JSON, bus messages) with libFuzzer for a fixed
# number of executions, starting from real messages (bench/fuzz/seeds), and reports executions
# and findings. usage: bench/fuzz.sh [RUNS] (default 500000)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-500000}"
out=.build/fuzz
mkdir -p "$out/corpus" "$out/findings"
echo "building the fuzz target (swiftc -sanitize=fuzzer,address)..."
if ! swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name LifelineProtocol -package-name Lifeline \
    $(find Sources/LifelineProtocol -name '*.swift' | sort) bench/fuzz/FuzzDecoders.swift \
    -o "$out/fuzz-decoders" 2>"$out/build.log"; then
    grep -v "Cannot export local symbol" "$out/build.log" >&2
    exit 1
fi
echo "fuzzing for $runs executions..."
set +e
"$out/fuzz-decoders" "$out/corpus" bench/fuzz/seeds -runs="$runs" -max_len=8192 -timeout=5 \
    -rss_limit_mb=2048 -artifact_prefix="$out/findings/" -print_final_stats=1 >"$out/log" 2>&1
status=$?
set -e
executed=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/log" | grep -o '[0-9]*$' || echo "?")
coverage=$(grep -o 'cov: [0-9]*' "$out/log" | tail -1 || true)
findings=$(find "$out/findings" -type f | wc -l)
echo "executions: $executed; $coverage; corpus: $(find "$out/corpus" -type f | wc -l) inputs; findings: $findings"
if [ "$status" -ne 0 ] || [ "$findings" -ne 0 ]; then
    echo "FINDINGS (inputs in $out/findings, log in $out/log):"
    tail -40 "$out/log"
    exit 1
fi
