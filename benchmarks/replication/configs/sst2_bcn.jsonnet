// allennlp-models' bcn (McCann et al. 2017) with the architecture of its published SST config (BiLSTM encoder and
// integrator of 300 per direction, maxout output), GloVe only, on SST binary sentences through allennlp-models'
// `sst_tokens` reader: the throughput peer of our multi-pass SST encoders (benchmarks/speed/train_throughput.py).
local embedding_dim = std.parseInt(std.extVar('EMBEDDING_DIM'));
{
  dataset_reader: { type: 'sst_tokens', use_subtrees: false, granularity: '2-class' },
  vocabulary: import '../../../training_config/glove_vocabulary.libsonnet',  // as our configs'
  train_data_path: std.extVar('SST_TRAIN'),
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
    output_layer: { input_dim: 2400, num_layers: 3, output_dims: [1200, 600, 2], pool_sizes: 4, dropout: [0.2, 0.3, 0.0] },
  },
  data_loader: { batch_sampler: { type: 'bucket', batch_size: 32 } },
  trainer: { num_epochs: 1, grad_norm: 5.0, optimizer: { type: 'adam', lr: 0.001 }, cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')) },
}
