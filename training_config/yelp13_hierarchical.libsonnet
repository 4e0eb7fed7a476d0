// Hierarchical document classification (Munkhdalai and Yu 2017, section 4.4) on Yelp 2013 / IMDB in Tang et al.'s
// (2015) format (reader `hierarchical_documents`): a sentence NSE, its last state per sentence, a document NSE or
// LSTM over the sentence vectors, its last state, softmax over ratings; see memplugins/models/hierarchical_classifier.py.
// Data: YELP_TRAIN, YELP_VALIDATION (default: a small self-written sample in that format, the real corpora are not
// obtainable here), GLOVE_PATH, EMBEDDING_DIM, NUM_EPOCHS (the paper: 50). Settings: one-layer read/write LSTMs of
// 100 units, fixed GloVe (the paper: 100d 6B), batch 32 bucketed by the number of sentences, Adam lr 3e-4, L2 1e-5,
// 15% dropout in the NSEs / document LSTM, 20% before the softmax.
local embedding_dim = std.parseInt(std.extVar('EMBEDDING_DIM'));
local hidden = 100;
function(document_encoder) {
  dataset_reader: {
    type: 'hierarchical_documents',
    // the NSEs' cost grows with the square of the length: a pathological document is cut, and counted, at 150
    // sentences of 200 tokens (Yelp13 / IMDB documents average 9-14 sentences of 16-25 words). Override with -o.
    max_sentences: 150,
    max_sentence_length: 200,
    token_indexers: { tokens: { type: 'single_id', lowercase_tokens: true } },
  },
  vocabulary: import 'glove_vocabulary.libsonnet',  // the training and validation words and GLOVE_PATH's
  train_data_path: std.extVar('YELP_TRAIN'),
  validation_data_path: std.extVar('YELP_VALIDATION'),
  model: {
    initializer: { regexes: [import 'zero_unknown_row.libsonnet'] },  // a zero @@UNKNOWN@@ row
    type: 'hierarchical_classifier',
    text_field_embedder: {
      token_embedders: {
        tokens: { type: 'embedding', embedding_dim: embedding_dim, pretrained_file: std.extVar('GLOVE_PATH'), trainable: false },
      },
    },
    sentence_encoder: { type: 'nse', input_size: embedding_dim, hidden_size: hidden, dropout: 0.15 },
    sentence_pooler: { type: 'cls_pooler', embedding_dim: hidden, cls_is_last_token: true },
    document_encoder: document_encoder(hidden),
    document_pooler: { type: 'cls_pooler', embedding_dim: hidden, cls_is_last_token: true },
    dropout: 0.2,
  },
  data_loader: { type: 'tensorized', batch_sampler: { type: 'bucket', batch_size: 32, sorting_keys: ['sentences'] } },
  trainer: {
    // training curves: `tensorboard --logdir SERIALIZATION_DIR/log`, or `memplugins plot-metrics SERIALIZATION_DIR`
    callbacks: [{ type: 'tensorboard', should_log_parameter_statistics: false }],
    // fused: the same update as one kernel per parameter, several times faster than torch's default loop
    // (memplugins.compat.optimizer_options; benchmarks/speed/optimizer_step.py)
    optimizer: { type: 'adam', lr: 0.0003, weight_decay: 0.00001, fused: true },
    validation_metric: '+accuracy',
    num_epochs: std.parseInt(std.extVar('NUM_EPOCHS')),
    cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')),
  },
}
