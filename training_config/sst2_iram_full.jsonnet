// IRAM full encoder (section 3.4), SST binary; see sst_iram.libsonnet.
(import 'sst_iram.libsonnet')(granularity='2-class', full=true)
