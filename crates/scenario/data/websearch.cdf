# Web search flow sizes: Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §2.2 and
# Fig. 4 (the query and background traffic of a production web-search cluster), as digitised
# for the pFabric and HPCC evaluations (Li et al., "HPCC: High Precision Congestion Control",
# SIGCOMM 2019, §5).
# size_bytes cdf_percent; between points sizes are interpolated linearly.
0 0
10000 15
20000 20
30000 30
50000 40
80000 53
200000 60
1000000 70
2000000 80
5000000 90
10000000 97
30000000 100
