#!/bin/sh
# A test port shaped to 10 Mbit/s, so that packets queue on a fast host and
# the strict priorities become visible (high-priority packets overtake queued
# low-priority ones).  The buffer holds 256 packets; beyond that the lowest
# priority queue loses packets first.
set -e
port=${1:-dpdk0}
ovs-vsctl set port "$port" qos=@q -- --id=@q create qos type=awafs \
    other-config:queues=2 other-config:thresholds=10000 \
    other-config:percentiles=10 other-config:max-rate=10000000 \
    other-config:buffer=256
