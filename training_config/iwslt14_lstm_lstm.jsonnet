// LSTM-LSTM baseline (RNNSearch-like): a 2-layer `lstm` encoder and allennlp-models' `lstm_cell` decoder with
// additive attention (the built-in decoder has one layer; the paper's has two); see iwslt14_nmt.libsonnet.
(import 'iwslt14_nmt.libsonnet')(
  encoder=function(input_size, hidden) { type: 'lstm', input_size: input_size, hidden_size: hidden, num_layers: 2, dropout: 0.2 },
  decoder_net=function(hidden) {
    type: 'lstm_cell', decoding_dim: hidden, target_embedding_dim: hidden,
    attention: { type: 'additive', vector_dim: hidden, matrix_dim: hidden },
  },
  lr=0.001,
)
