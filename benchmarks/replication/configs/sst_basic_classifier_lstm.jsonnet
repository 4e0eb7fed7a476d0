// The allennlp-models peer of our SST classifiers for benchmarks/replication/replicate.py: allennlp-models' published
// basic_stanford_sentiment_treebank settings (basic_classifier, a 2-layer `lstm` of 512 as the Seq2Vec encoder,
// fixed GloVe, bucket batches of 32, Adam 1e-3, gradient norm 5, patience 1), trained on every labelled phrase and
// validated on sentences, with our data variables: SST_TRAIN, SST_VALIDATION, SST_GRANULARITY, GLOVE_PATH,
// EMBEDDING_DIM (the published config: 300d GloVe 840B), NUM_EPOCHS (published: 5).
local embedding_dim = std.parseInt(std.extVar('EMBEDDING_DIM'));
local reader(subtrees) = {
  type: 'sst_tokens',
  granularity: std.extVar('SST_GRANULARITY'),
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
    type: 'basic_classifier',
    text_field_embedder: {
      token_embedders: {
        tokens: { type: 'embedding', embedding_dim: embedding_dim, pretrained_file: std.extVar('GLOVE_PATH'), trainable: false },
      },
    },
    seq2vec_encoder: { type: 'lstm', input_size: embedding_dim, hidden_size: 512, num_layers: 2 },
  },
  data_loader: { batch_sampler: { type: 'bucket', batch_size: 32 } },
  trainer: {
    num_epochs: std.parseInt(std.extVar('NUM_EPOCHS')),
    patience: 1,
    grad_norm: 5.0,
    validation_metric: '+accuracy',
    optimizer: { type: 'adam', lr: 0.001 },
    cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')),
  },
}
