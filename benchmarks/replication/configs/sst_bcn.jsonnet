// The allennlp-models peer of our SST classifiers for benchmarks/replication/replicate.py: allennlp-models' published
// biattentive_classification_network settings (bcn: 300-d ReLU pre-encoder, BiLSTM encoder and integrator of 300
// per direction, maxout output 1200-600, embedding dropout 0.25, bucket batches of 100, Adam 1e-3, gradient norm 5,
// patience 5), trained on every labelled phrase and validated on sentences, GloVe only (no ELMo / CoVe), with our
// data variables: SST_TRAIN, SST_VALIDATION, SST_GRANULARITY, GLOVE_PATH, EMBEDDING_DIM (published: 300d 840B),
// NUM_EPOCHS (published: 40).
local embedding_dim = std.parseInt(std.extVar('EMBEDDING_DIM'));
local granularity = std.extVar('SST_GRANULARITY');
local reader(subtrees) = {
  type: 'sst_tokens',
  granularity: granularity,
  use_subtrees: subtrees,
  token_indexers: { tokens: { type: 'single_id', lowercase_tokens: true } },
};
{
  dataset_reader: reader(true),
  validation_dataset_reader: reader(false),
  vocabulary: import '../../../training_config/glove_vocabulary.libsonnet',  // as our configs'
  train_data_path: std.extVar('SST_TRAIN'),
  validation_data_path: std.extVar('SST_VALIDATION'),
  model: {
    initializer: { regexes: [import '../../../training_config/zero_unknown_row.libsonnet'] },  // a zero @@UNKNOWN@@ row, as our configs'
    type: 'bcn',
    text_field_embedder: {
      token_embedders: {
        tokens: { type: 'embedding', embedding_dim: embedding_dim, pretrained_file: std.extVar('GLOVE_PATH'), trainable: false },
      },
    },
    embedding_dropout: 0.25,
    pre_encode_feedforward: { input_dim: embedding_dim, num_layers: 1, hidden_dims: [300], activations: ['relu'], dropout: [0.25] },
    encoder: { type: 'lstm', input_size: 300, hidden_size: 300, num_layers: 1, bidirectional: true },
    integrator: { type: 'lstm', input_size: 1800, hidden_size: 300, num_layers: 1, bidirectional: true },
    integrator_dropout: 0.1,
    output_layer: {
      input_dim: 2400,
      num_layers: 3,
      output_dims: [1200, 600, std.parseInt(std.split(granularity, '-')[0])],
      pool_sizes: 4,
      dropout: [0.2, 0.3, 0.0],
    },
  },
  data_loader: { batch_sampler: { type: 'bucket', batch_size: 100 } },
  trainer: {
    num_epochs: std.parseInt(std.extVar('NUM_EPOCHS')),
    patience: 5,
    grad_norm: 5.0,
    validation_metric: '+accuracy',
    optimizer: { type: 'adam', lr: 0.001 },
    cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')),
  },
}
