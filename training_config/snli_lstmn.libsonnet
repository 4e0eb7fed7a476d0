// LSTMN attention fusion on SNLI (Cheng et al. 2016, section 5.3); see memplugins/models/lstmn_fusion.py.
// Data: SNLI_TRAIN, SNLI_VALIDATION ('' trains without validation), GLOVE_PATH, EMBEDDING_DIM, NUM_EPOCHS.
// Settings: Adam (0.9, 0.999) lr 1e-3, batch 32 (paper: 16 or 32), dropout 0.2 (paper: from 0.1-0.4), hidden
// size h = 100 (paper: 100 / 300 / 450), embeddings GloVe-initialised and updated (the paper freezes the GloVe
// words during the first epoch; we do not). Classifier: "a 2-layer neural network classifier with ReLU" over the
// concatenated average-pooled tapes, read as one ReLU hidden layer of size h plus the output layer (two weight
// layers). Parameter counts against the paper's Table 3: README, "Configs and the papers' settings".
local validation = std.extVar('SNLI_VALIDATION');
local embedding_dim = std.parseInt(std.extVar('EMBEDDING_DIM'));
function(fusion, hidden_size=100) {
  dataset_reader: {
    type: 'snli_parsed',
    tokenizer: { type: 'spacy_blank' },
    // the cost is quadratic in length: a pathological input (a 10,000-token line) is cut, and counted, at 200
    // tokens, far above SNLI's longest sentence (59). Override: -o '{"dataset_reader.max_tokens": null}'.
    max_tokens: 200,
    token_indexers: { tokens: { type: 'single_id', lowercase_tokens: true } },
  },
  vocabulary: import 'glove_vocabulary.libsonnet',  // the training and validation words and GLOVE_PATH's
  train_data_path: std.extVar('SNLI_TRAIN'),
  [if validation != '' then 'validation_data_path']: validation,
  model: {
    initializer: { regexes: [import 'zero_unknown_row.libsonnet'] },  // a zero @@UNKNOWN@@ row
    type: 'lstmn_fusion',
    fusion: fusion,
    hidden_size: hidden_size,
    dropout: 0.2,
    text_field_embedder: {
      token_embedders: {
        tokens: { type: 'embedding', embedding_dim: embedding_dim, pretrained_file: std.extVar('GLOVE_PATH'), trainable: true },
      },
    },
    classifier_feedforward: { input_dim: 2 * hidden_size, num_layers: 1, hidden_dims: hidden_size, activations: 'relu', dropout: 0.2 },
  },
  data_loader: { type: 'tensorized', batch_sampler: { type: 'bucket', batch_size: 32 } },
  trainer: {
    // training curves: `tensorboard --logdir SERIALIZATION_DIR/log`, or `memplugins plot-metrics SERIALIZATION_DIR`
    callbacks: [{ type: 'tensorboard', should_log_parameter_statistics: false }],
    // fused: the same update as one kernel per parameter, several times faster than torch's default loop
    // (memplugins.compat.optimizer_options; benchmarks/speed/optimizer_step.py)
    optimizer: { type: 'adam', lr: 0.001, betas: [0.9, 0.999], fused: true },
    validation_metric: '+accuracy',
    num_epochs: std.parseInt(std.extVar('NUM_EPOCHS')),
    [if validation != '' then 'patience']: 5,
    cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')),
  },
}
