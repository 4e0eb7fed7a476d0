// NSE-NSE document model: a document NSE over the sentence NSE's vectors; see yelp13_hierarchical.libsonnet.
(import 'yelp13_hierarchical.libsonnet')(
  document_encoder=function(hidden) { type: 'nse', input_size: hidden, hidden_size: hidden, dropout: 0.15 },
)
