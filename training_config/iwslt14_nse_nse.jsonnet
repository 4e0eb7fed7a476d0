// NSE-NSE: the encoder NSE's final memory is shared with a decoder NSE (DecoderNet `nse`), which reads and writes
// it at every target step; see iwslt14_nmt.libsonnet and memplugins/decoders/nse_decoder_net.py.
(import 'iwslt14_nmt.libsonnet')(
  encoder=function(input_size, hidden) { type: 'nse', input_size: input_size, hidden_size: hidden, output: 'memory', dropout: 0.2 },
  decoder_net=function(hidden) { type: 'nse', decoding_dim: hidden, target_embedding_dim: hidden, dropout: 0.3 },
  lr=0.0003,
)
