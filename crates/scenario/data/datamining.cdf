# Data-mining flow sizes: Greenberg et al., "VL2: A Scalable and Flexible Data Center Network",
# SIGCOMM 2009, Fig. 2 (a cluster running data-mining jobs), as digitised for the Opera
# evaluation (Mellette et al., "Expanding across time to deliver bandwidth efficiency and low
# latency", NSDI 2020, Fig. 1a). Most flows are mice, most bytes are in flows of 100 MB and up.
# size_bytes cdf_percent; between points sizes are interpolated linearly.
100 0
180 8.5
250 14
560 33
900 47
1100 55
1870 65
3160 70
10000 80
100001 87.4
400000 90
1850000 95
10000000 97
30000000 98
100000000 99
250000000 99.5
1000000000 100
