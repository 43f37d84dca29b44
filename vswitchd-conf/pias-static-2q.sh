#!/bin/sh
# PIAS-style baseline: two queues and a fixed 10 kB demotion threshold.
# Flows that have sent less than 10 kB are served first; the threshold
# never adapts (mode=static).
set -e
port=${1:-dpdk0}
ovs-vsctl set port "$port" qos=@q -- --id=@q create qos type=awafs \
    other-config:queues=2 other-config:mode=static \
    other-config:thresholds=10000
