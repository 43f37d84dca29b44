"""The AWAFS test bed: a sandboxed patched OVS-DPDK switch (ovs_sandbox),
veth/raw-socket traffic with AWAFS headers (traffic) and flow-size
workloads (workload).  Used by the tests, the demo and the benchmarks."""
