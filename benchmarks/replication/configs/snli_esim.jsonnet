// allennlp-models' esim (Chen et al. 2017) with the architecture of allennlp-models' published SNLI config
// (hidden 300), given the same reader, embeddings and epoch budget as our RTE models (benchmarks/snli_rte.py).
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
    type: 'esim',
    dropout: 0.5,
    text_field_embedder: {
      token_embedders: {
        tokens: { type: 'embedding', embedding_dim: embedding_dim, pretrained_file: std.extVar('GLOVE_PATH'), trainable: false },
      },
    },
    encoder: { type: 'lstm', input_size: embedding_dim, hidden_size: 300, num_layers: 1, bidirectional: true },
    matrix_attention: { type: 'dot_product' },
    projection_feedforward: { input_dim: 2400, hidden_dims: 300, num_layers: 1, activations: 'relu' },
    inference_encoder: { type: 'lstm', input_size: 300, hidden_size: 300, num_layers: 1, bidirectional: true },
    output_feedforward: { input_dim: 2400, num_layers: 1, hidden_dims: 300, activations: 'relu', dropout: 0.5 },
    output_logit: { input_dim: 300, num_layers: 1, hidden_dims: 3, activations: 'linear' },
    // a zero @@UNKNOWN@@ row (as our configs'), then the published initializers
    initializer: { regexes: [import '../../../training_config/zero_unknown_row.libsonnet', ['.*linear_layers.*weight', { type: 'xavier_uniform' }], ['.*linear_layers.*bias', { type: 'zero' }], ['.*weight_ih.*', { type: 'xavier_uniform' }], ['.*weight_hh.*', { type: 'orthogonal' }], ['.*bias_ih.*', { type: 'zero' }], ['.*bias_hh.*', { type: 'lstm_hidden_bias' }]] },
  },
  data_loader: { batch_sampler: { type: 'bucket', batch_size: 32 } },
  trainer: {
    optimizer: { type: 'adam', lr: 0.0004 },
    validation_metric: '+accuracy',
    num_epochs: std.parseInt(std.extVar('NUM_EPOCHS')),
    grad_norm: 10.0,
    cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')),
  },
}
