// Rocktäschel et al. (2016): word-by-word model (see snli_rte.libsonnet for data variables and settings).
(import 'snli_rte.libsonnet')(mode='word_by_word')
