// Answer sentence selection on WikiQA with MMA-NSE attention (Munkhdalai and Yu 2017, section 4.2).
// Data: WIKIQA_TRAIN, WIKIQA_VALIDATION (WikiQA-{train,dev}.txt or .tsv; default: the shipped samples),
// GLOVE_PATH, EMBEDDING_DIM, NUM_EPOCHS (the paper: 10). Settings: fixed GloVe (the paper: 300d 840B) mapped
// linearly to 512-d inputs, two-layer read/write LSTMs, k = 512, batch 4, Adam lr 1e-5, 40% dropout after the
// embeddings, no L2. Model selection on dev MAP. Test: allennlp evaluate ARCHIVE WikiQA-test.tsv
local embedding_dim = std.parseInt(std.extVar('EMBEDDING_DIM'));
{
  dataset_reader: {
    type: 'wikiqa',
    // the NSE's cost grows with the square of the length: a pathological input is cut, and counted, at 400 tokens,
    // far above WikiQA's longest sentence (236). Override: -o '{"dataset_reader.max_tokens": null}'.
    max_tokens: 400,
    token_indexers: { tokens: { type: 'single_id', lowercase_tokens: true } },
  },
  vocabulary: import 'glove_vocabulary.libsonnet',  // the training and validation words and GLOVE_PATH's
  train_data_path: std.extVar('WIKIQA_TRAIN'),
  validation_data_path: std.extVar('WIKIQA_VALIDATION'),
  model: {
    initializer: { regexes: [import 'zero_unknown_row.libsonnet'] },  // a zero @@UNKNOWN@@ row
    type: 'answer_selection',
    // the paper: two-layer read and write LSTMs for this task; the question NSE reads the answer's memory
    answer_encoder: { type: 'nse', hidden_size: 512, num_layers: 2 },
    question_encoder: { type: 'nse', hidden_size: 512, num_layers: 2, num_extra_memories: 1 },
    dropout: 0.4,
    text_field_embedder: {
      token_embedders: {
        tokens: {
          type: 'embedding', embedding_dim: embedding_dim, pretrained_file: std.extVar('GLOVE_PATH'),
          trainable: false, projection_dim: 512,
        },
      },
    },
    classifier_feedforward: { input_dim: 2048, num_layers: 1, hidden_dims: 1024, activations: 'relu' },
  },
  data_loader: { type: 'tensorized', batch_size: 4, shuffle: true },
  validation_data_loader: { type: 'tensorized', batch_size: 32 },
  trainer: {
    // training curves: `tensorboard --logdir SERIALIZATION_DIR/log`, or `memplugins plot-metrics SERIALIZATION_DIR`
    callbacks: [{ type: 'tensorboard', should_log_parameter_statistics: false }],
    // fused: the same update as one kernel per parameter, several times faster than torch's default loop
    // (memplugins.compat.optimizer_options; benchmarks/speed/optimizer_step.py)
    optimizer: { type: 'adam', lr: 0.00001, fused: true },
    validation_metric: '+MAP',
    num_epochs: std.parseInt(std.extVar('NUM_EPOCHS')),
    cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')),
  },
}
