#!/bin/sh
# AWAFS: four queues whose thresholds follow the workload.  Every 200 ms the
# switch sets them to the 10th, 20th and 30th percentiles of the sizes of the
# flows that completed in the last 250 ms (the thesis parameters), starting
# from 7/14/21 kB.  ECT packets are CE-marked above 65 queued packets, the
# DCTCP marking threshold K of the thesis experiments.
set -e
port=${1:-dpdk0}
ovs-vsctl set port "$port" qos=@q -- --id=@q create qos type=awafs \
    other-config:queues=4 other-config:mode=adaptive \
    other-config:percentiles=10,20,30 \
    other-config:thresholds=7000,14000,21000 \
    other-config:window-ms=250 other-config:interval-ms=200 \
    other-config:min-samples=20 other-config:ecn-threshold=65
