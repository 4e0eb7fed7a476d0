// allennlp-models' decomposable_attention (Parikh et al. 2016) with the architecture of allennlp-models' published
// SNLI config, given the same reader, embeddings and optimiser budget as our RTE models (benchmarks/snli_rte.py).
local validation = std.extVar('SNLI_VALIDATION');
local embedding_dim = std.parseInt(std.extVar('EMBEDDING_DIM'));
{
  dataset_reader: {
    type: 'snli_parsed',
    tokenizer: { type: 'spacy_blank' },
    token_indexers: { tokens: { type: 'single_id', lowercase_tokens: true } },
  },
  vocabulary: import '../../../training_config/glove_vocabulary.libsonnet',  // as our configs'
  train_data_path: std.extVar('SNLI_TRAIN'),
  [if validation != '' then 'validation_data_path']: validation,
  model: {
    type: 'decomposable_attention',
    text_field_embedder: {
      token_embedders: {
        tokens: {
          type: 'embedding',
          embedding_dim: embedding_dim,
          pretrained_file: std.extVar('GLOVE_PATH'),
          trainable: false,
          projection_dim: 200,
        },
      },
    },
    attend_feedforward: { input_dim: 200, num_layers: 2, hidden_dims: 200, activations: 'relu', dropout: 0.2 },
    matrix_attention: { type: 'dot_product' },
    compare_feedforward: { input_dim: 400, num_layers: 2, hidden_dims: 200, activations: 'relu', dropout: 0.2 },
    aggregate_feedforward: { input_dim: 400, num_layers: 2, hidden_dims: [200, 3], activations: ['relu', 'linear'], dropout: [0.2, 0.0] },
    // a zero @@UNKNOWN@@ row (as our configs'), then the published initializers
    initializer: { regexes: [import '../../../training_config/zero_unknown_row.libsonnet', ['.*linear_layers.*weight', { type: 'xavier_normal' }], ['.*token_embedder_tokens._projection.*weight', { type: 'xavier_normal' }]] },
  },
  data_loader: { batch_sampler: { type: 'bucket', batch_size: 32 } },
  trainer: {
    optimizer: { type: 'adam', lr: 0.001 },
    validation_metric: '+accuracy',
    num_epochs: std.parseInt(std.extVar('NUM_EPOCHS')),
    cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')),
  },
}
