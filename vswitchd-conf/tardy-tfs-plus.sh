#!/bin/sh
# AWAFS with TFS+: the switch counts each flow itself (trust=switch), and a
# flow that retransmitted goes to the top queue while its message is under
# 100 kB, so that a short flow that lost a packet catches up.
set -e
port=${1:-dpdk0}
ovs-vsctl set port "$port" qos=@q -- --id=@q create qos type=awafs \
    other-config:queues=4 other-config:percentiles=10,20,30 \
    other-config:trust=switch other-config:tardy=tfs+ \
    other-config:tardy-limit=100000
