// IRAM vanilla encoder (section 3.3), SST binary; see sst_iram.libsonnet.
(import 'sst_iram.libsonnet')(granularity='2-class', full=false)
