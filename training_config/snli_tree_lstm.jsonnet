// Tree LSTM (Le and Zuidema 2015) sentence encoders on SNLI: premise and hypothesis encoded over the corpus's
// binary parses (`snli_parsed` with parse_trees) by one shared `tree_lstm`, features [p; h; |p - h|; p * h], one
// 1024-unit ReLU layer, softmax; see memplugins/models/tree_pair_classifier.py.
// Data: SNLI_TRAIN, SNLI_VALIDATION ('' trains without validation), GLOVE_PATH, EMBEDDING_DIM, NUM_EPOCHS.
// Settings: d = 100, fixed GloVe, Adam lr 1e-3, batch 128, dropout 0.1. Not a paper's setting: Le and Zuidema
// evaluate on SST only (section 5), so this config follows the sentence-encoder pattern and features of the NSE
// paper's SNLI classifier (Munkhdalai and Yu 2017, section 4.1) with the tree LSTM's own d.
local validation = std.extVar('SNLI_VALIDATION');
local embedding_dim = std.parseInt(std.extVar('EMBEDDING_DIM'));
local hidden_dim = 100;
{
  dataset_reader: {
    type: 'snli_parsed',
    parse_trees: true,
    token_indexers: { tokens: { type: 'single_id', lowercase_tokens: true } },
  },
  vocabulary: import 'glove_vocabulary.libsonnet',  // the training and validation words and GLOVE_PATH's
  train_data_path: std.extVar('SNLI_TRAIN'),
  [if validation != '' then 'validation_data_path']: validation,
  model: {
    initializer: { regexes: [import 'zero_unknown_row.libsonnet'] },  // a zero @@UNKNOWN@@ row
    type: 'tree_pair_classifier',
    text_field_embedder: {
      token_embedders: {
        tokens: { type: 'embedding', embedding_dim: embedding_dim, pretrained_file: std.extVar('GLOVE_PATH'), trainable: false },
      },
    },
    encoder: { type: 'tree_lstm', input_dim: embedding_dim, hidden_dim: hidden_dim },
    classifier_feedforward: { input_dim: 4 * hidden_dim, num_layers: 1, hidden_dims: 1024, activations: 'relu' },
    dropout: 0.1,
  },
  data_loader: { type: 'tensorized', batch_sampler: { type: 'bucket', batch_size: 128 } },
  trainer: {
    // training curves: `tensorboard --logdir SERIALIZATION_DIR/log`, or `memplugins plot-metrics SERIALIZATION_DIR`
    callbacks: [{ type: 'tensorboard', should_log_parameter_statistics: false }],
    // fused: the same update as one kernel per parameter, several times faster than torch's default loop
    // (memplugins.compat.optimizer_options; benchmarks/speed/optimizer_step.py)
    optimizer: { type: 'adam', lr: 0.001, fused: true },
    validation_metric: '+accuracy',
    num_epochs: std.parseInt(std.extVar('NUM_EPOCHS')),
    cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')),
  },
}
