# Karuna's "Long Flow" workload (seed 003, §8.2): sizes uniform from 1 kB
# to 10 MB (shared/workloads/*.cdf format: size in bytes, cumulative p).
1000 0
10000000 1
