// NSE-LSTM document model: a document LSTM over the sentence NSE's vectors; see yelp13_hierarchical.libsonnet.
(import 'yelp13_hierarchical.libsonnet')(
  document_encoder=function(hidden) { type: 'lstm', input_size: hidden, hidden_size: hidden },
)
