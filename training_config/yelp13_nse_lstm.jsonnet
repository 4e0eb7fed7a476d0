// NSE-LSTM document model: a document LSTM over the sentence NSE's vectors; see yelp13_hierarchical.libsonnet.
// The paper's 15% dropout on the document LSTM is `document_dropout` (on its outputs): a one-layer `lstm` ignores
// its own `dropout`, which acts only between layers.
(import 'yelp13_hierarchical.libsonnet')(
  document_encoder=function(hidden) { type: 'lstm', input_size: hidden, hidden_size: hidden },
) + { model+: { document_dropout: 0.15 } }
