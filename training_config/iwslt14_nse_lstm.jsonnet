// NSE-LSTM: an `nse` encoder (its outputs h_t) and allennlp-models' `lstm_cell` decoder with additive attention over
// them; see iwslt14_nmt.libsonnet.
(import 'iwslt14_nmt.libsonnet')(
  encoder=function(input_size, hidden) { type: 'nse', input_size: input_size, hidden_size: hidden, dropout: 0.2 },
  decoder_net=function(hidden) {
    type: 'lstm_cell', decoding_dim: hidden, target_embedding_dim: hidden,
    attention: { type: 'additive', vector_dim: hidden, matrix_dim: hidden },
  },
  lr=0.0003,
)
