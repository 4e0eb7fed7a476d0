// NSE, SST fine-grained (5 classes); see sst_nse.libsonnet.
(import 'sst_nse.libsonnet')(granularity='5-class', mlp_units=300)
