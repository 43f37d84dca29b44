#!/bin/sh
# Karuna: queue 0 for flows with a deadline, flows of known size split by
# their size (thresholds from the 40th and 80th percentiles of such flows'
# completed sizes), flows of unknown size sieved by bytes sent; the switch
# counts each flow itself and ages a message at its 2nd to 10th timeout.
# The hosts' agents copy socket marks and pace deadline flows with MCP:
# awafs-host attach --cc awafs_mcp --karuna.
set -e
port=${1:-dpdk0}
ovs-vsctl set port "$port" qos=@q -- --id=@q create qos type=awafs \
    other-config:queues=4 other-config:karuna=on \
    other-config:percentiles=10,20 other-config:size-percentiles=40,80 \
    other-config:trust=switch other-config:aging=on
