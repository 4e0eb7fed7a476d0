// Rocktäschel et al. (2016): attention model (see snli_rte.libsonnet for data variables and settings).
(import 'snli_rte.libsonnet')(mode='attention')
