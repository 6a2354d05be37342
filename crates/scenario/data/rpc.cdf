# RPC sizes: Montazeri et al., "Homa: A Receiver-Driven Low-Latency Transport Protocol Using
# Network Priorities", SIGCOMM 2018, Fig. 1, workload W3 (all RPCs in a Google datacenter), from
# the message-size distribution its authors publish with their simulator (Google_AllRPC),
# summed here at powers of two. Nearly all messages are small: half within 256 B, 86% within
# 1 KB, 99.7% within 128 KB; the mean (of this piecewise-linear table) is 3.34 KB.
# size_bytes cdf_percent; between points sizes are interpolated linearly.
3 6.488
32 9.732
64 15.526
128 35.155
256 49.786
512 78.486
1024 86.313
2048 90.880
4096 93.488
8192 96.424
16384 98.461
32768 99.034
65536 99.316
131072 99.703
262144 99.833
524288 99.940
1048576 99.971
2097152 99.987
4194304 99.994
8388608 99.998
15158197 100
