// LSTMN without fusion (Cheng et al. 2016, Table 3 row "LSTMN", h = 100: their baseline for the fusions): two
// LSTMNs read premise and hypothesis independently; see snli_lstmn.libsonnet for data and settings.
(import 'snli_lstmn.libsonnet')(fusion='none')
