#!/usr/bin/env bash
# What a broker group costs against a single broker, in one interleaved run: broadcast N=1 (64 B and
# 1 KiB, one-way to a service's handler) and batched throughput, of a three-broker group's leader
# (a real etcd, every step replicated to a majority before its events leave) and of a single
# broker with the same durable journal (--durable), beside the usual baselines. Prints the table
# (ratios of the group rows to the single broker's) and writes bench/results/group-DATE/.
#
#   bash bench/group-cost.sh [--quick] [--transports ipc|tcp]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deploy/setup.sh"
ensure_prerequisites
ensure_etcd
exec bash "$lifeline_root/bench/run.sh" --durable --group --no-curve --fanouts 1 --only broadcast,throughput \
    --out "$lifeline_root/bench/results/group-$(date +%Y-%m-%d)" "$@"
