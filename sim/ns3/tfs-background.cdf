# TFS's background traffic (seed 004, §5: "size from 64KB to 32 MB"),
# whose distribution the letter does not give: here log-uniform, each
# doubling from 64 KB to 32 MB equally likely (linear within it, as
# awafs-ns3 reads a CDF); mean 5.6 MB.  Lines: size (bytes), cumulative
# probability.
65536 0
131072 0.111111
262144 0.222222
524288 0.333333
1048576 0.444444
2097152 0.555556
4194304 0.666667
8388608 0.777778
16777216 0.888889
33554432 1
