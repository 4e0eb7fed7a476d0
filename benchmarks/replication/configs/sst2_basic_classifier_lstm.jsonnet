// allennlp-models' basic_classifier with a one-layer `lstm` Seq2Vec encoder (d = 300, as our SST encoders' widest
// setting), on SST binary sentences through allennlp-models' own `sst_tokens` reader: the throughput peer of our
// single-pass SST encoders (benchmarks/speed/train_throughput.py). Not a tuned model: a cost comparison.
local embedding_dim = std.parseInt(std.extVar('EMBEDDING_DIM'));
{
  dataset_reader: { type: 'sst_tokens', use_subtrees: false, granularity: '2-class' },
  vocabulary: import '../../../training_config/glove_vocabulary.libsonnet',  // as our configs'
  train_data_path: std.extVar('SST_TRAIN'),
  model: {
    initializer: { regexes: [import '../../../training_config/zero_unknown_row.libsonnet'] },  // a zero @@UNKNOWN@@ row, as our configs'
    type: 'basic_classifier',
    text_field_embedder: {
      token_embedders: {
        tokens: { type: 'embedding', embedding_dim: embedding_dim, pretrained_file: std.extVar('GLOVE_PATH'), trainable: false },
      },
    },
    seq2vec_encoder: { type: 'lstm', input_size: embedding_dim, hidden_size: 300, num_layers: 1 },
    dropout: 0.5,
  },
  data_loader: { batch_sampler: { type: 'bucket', batch_size: 32 } },
  trainer: { num_epochs: 1, optimizer: { type: 'adam', lr: 0.001 }, cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')) },
}
