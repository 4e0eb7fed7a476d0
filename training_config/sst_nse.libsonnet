// NSE sentence classification on the Stanford Sentiment Treebank (Munkhdalai and Yu 2017, section 4.3), from
// AllenNLP's `basic_classifier`: trained on every labelled phrase of the training trees (allennlp-models'
// `sst_tokens` with use_subtrees), validated on full sentences; the sentence representation is the NSE output at
// the last token (`cls_pooler` with cls_is_last_token), then one ReLU layer (1024 units binary, 300 fine-grained)
// and a softmax layer.
// Data: SST_TRAIN, SST_VALIDATION (PTB-format trees; default: 40 shipped dev trees), GLOVE_PATH, EMBEDDING_DIM,
// NUM_EPOCHS (the paper: 25). Settings: k = 300, batch 64, Adam lr 3e-4, L2 3e-5, dropout 0.5 on the read/write
// networks and before the last layer, fixed embeddings.
local embedding_dim = std.parseInt(std.extVar('EMBEDDING_DIM'));
function(granularity, mlp_units) {
  local reader(subtrees) = {
    type: 'checked_sst_tokens',  // allennlp-models' sst_tokens behind file:line checks
    max_tokens: 200,  // SST's longest sentence has 56 tokens; this bounds a pathological prediction input
    granularity: granularity,
    use_subtrees: subtrees,
    token_indexers: { tokens: { type: 'single_id', lowercase_tokens: true } },
  },
  dataset_reader: reader(true),
  validation_dataset_reader: reader(false),
  vocabulary: import 'glove_vocabulary.libsonnet',  // the training and validation words and GLOVE_PATH's
  train_data_path: std.extVar('SST_TRAIN'),
  validation_data_path: std.extVar('SST_VALIDATION'),
  model: {
    initializer: { regexes: [import 'zero_unknown_row.libsonnet'] },  // a zero @@UNKNOWN@@ row
    type: 'basic_classifier',
    text_field_embedder: {
      token_embedders: {
        tokens: { type: 'embedding', embedding_dim: embedding_dim, pretrained_file: std.extVar('GLOVE_PATH'), trainable: false },
      },
    },
    seq2seq_encoder: { type: 'nse', input_size: embedding_dim, hidden_size: 300, dropout: 0.5 },
    seq2vec_encoder: { type: 'cls_pooler', embedding_dim: 300, cls_is_last_token: true },
    // FeedForward's dropout follows its ReLU layer, i.e. it is the dropout before the softmax layer; the NSE's
    // dropout (0.5) is on the read and write networks' outputs. basic_classifier's own `dropout` (on the pooled
    // vector, before the ReLU layer) is not in the paper and is left at 0.
    feedforward: { input_dim: 300, num_layers: 1, hidden_dims: mlp_units, activations: 'relu', dropout: 0.5 },
  },
  data_loader: { type: 'tensorized', batch_sampler: { type: 'bucket', batch_size: 64 } },
  trainer: {
    // training curves: `tensorboard --logdir SERIALIZATION_DIR/log`, or `memplugins plot-metrics SERIALIZATION_DIR`
    callbacks: [{ type: 'tensorboard', should_log_parameter_statistics: false }],
    // fused: the same update as one kernel per parameter, several times faster than torch's default loop
    // (memplugins.compat.optimizer_options; benchmarks/speed/optimizer_step.py)
    optimizer: { type: 'adam', lr: 0.0003, weight_decay: 0.00003, fused: true },
    validation_metric: '+accuracy',
    num_epochs: std.parseInt(std.extVar('NUM_EPOCHS')),
    cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')),
  },
}
