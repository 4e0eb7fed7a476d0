// IRAM full encoder (section 3.4), SST fine-grained; see sst_iram.libsonnet.
(import 'sst_iram.libsonnet')(granularity='5-class', full=true)
