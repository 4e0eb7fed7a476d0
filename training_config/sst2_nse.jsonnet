// NSE, SST binary (neutral phrases and sentences dropped); see sst_nse.libsonnet.
(import 'sst_nse.libsonnet')(granularity='2-class', mlp_units=1024)
