// The 3-layer LSTMN language model (Cheng et al. 2016, Table 1: perplexity 102); every other setting as
// ptb_lstmn_lm.jsonnet.
(import 'ptb_lstmn_lm.jsonnet') + { model+: { contextualizer+: { num_layers: 3 } } }
