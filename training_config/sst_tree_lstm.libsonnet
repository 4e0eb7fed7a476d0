// Le and Zuidema (2015) LSTM-RNN on the Stanford Sentiment Treebank: `tree_lstm` over the treebank's binary trees,
// a softmax at every labelled node (the paper's objective), root accuracy as the reported metric; see
// memplugins/models/tree_classifier.py. Data: SST_TRAIN, SST_VALIDATION (PTB-format trees; default: 40 shipped
// dev trees), GLOVE_PATH, EMBEDDING_DIM, NUM_EPOCHS (the paper: 20). Settings (section 5.2): d = 50, tanh,
// AdaGrad lr 0.05, L2 1e-3 (as weight decay), mini-batches of 5 sentences, no dropout, GloVe-initialised word
// vectors that are fine-tuned (the paper: 100d; only 50d are shipped here). The L2 reaches the word vectors too, as
// the paper's J(θ) says; under AdaGrad it shrinks the rows a batch does not use, and measured it helps: leaving the
// table out of it cost fine-grained test accuracy 1.8 points on the mean of 10 seeds (docs/research/sst_tree_lstm.md).
local embedding_dim = std.parseInt(std.extVar('EMBEDDING_DIM'));
function(granularity, cell='tree_lstm') {
  dataset_reader: {
    type: 'sst_trees',
    granularity: granularity,
    // a pathological input: a plain sentence is cut, and counted, at 200 tokens (SST's longest: 56); a longer
    // tree is skipped in files. The tree LSTM's loop runs once per tree level.
    max_tokens: 200,
    token_indexers: { tokens: { type: 'single_id', lowercase_tokens: true } },
  },
  vocabulary: import 'glove_vocabulary.libsonnet',  // the training and validation words and GLOVE_PATH's
  train_data_path: std.extVar('SST_TRAIN'),
  validation_data_path: std.extVar('SST_VALIDATION'),
  model: {
    initializer: { regexes: [import 'zero_unknown_row.libsonnet'] },  // a zero @@UNKNOWN@@ row
    type: 'tree_classifier',
    text_field_embedder: {
      token_embedders: {
        tokens: { type: 'embedding', embedding_dim: embedding_dim, pretrained_file: std.extVar('GLOVE_PATH'), trainable: true },
      },
    },
    encoder: { type: cell, input_dim: embedding_dim, hidden_dim: 50, activation: 'tanh' },
  },
  data_loader: { type: 'tensorized', batch_size: 5, shuffle: true },
  validation_data_loader: { type: 'tensorized', batch_size: 64 },
  trainer: {
    // training curves: `tensorboard --logdir SERIALIZATION_DIR/log`, or `memplugins plot-metrics SERIALIZATION_DIR`
    callbacks: [{ type: 'tensorboard', should_log_parameter_statistics: false }],
    // fused: the same update as one kernel per parameter, several times faster than torch's default loop
    // (memplugins.compat.optimizer_options; benchmarks/speed/optimizer_step.py)
    optimizer: { type: 'adagrad', lr: 0.05, weight_decay: 0.001, fused: true },
    validation_metric: '+accuracy',
    num_epochs: std.parseInt(std.extVar('NUM_EPOCHS')),
    cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')),
  },
}
