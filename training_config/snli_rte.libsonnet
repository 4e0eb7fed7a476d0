// Rocktäschel et al. (2016) RTE models on SNLI; see memplugins/models/rte_attention.py.
// Data and embeddings come from std.extVar (defaults: the samples under fixtures/, see memplugins/compat.py):
//   SNLI_TRAIN, SNLI_VALIDATION   SNLI .jsonl / .jsonl.gz files
//   GLOVE_PATH, EMBEDDING_DIM     pretrained vectors (the paper: fixed word2vec 300d; we ship GloVe 6B 50d)
//   NUM_EPOCHS, CUDA_DEVICE
// Optimiser: Adam (beta1 0.9, beta2 0.999) with the paper's grid (section 3): lr {1e-4, 3e-4, 1e-3},
// dropout {0, 0.1, 0.2}, L2 {0, 1e-4, 3e-4, 1e-3}; these configs use lr 1e-3, dropout 0.1, L2 1e-4, k = 100.
//   (SNLI_VALIDATION='' trains without validation: fixed epochs, last model kept.)
local validation = std.extVar('SNLI_VALIDATION');
function(mode, two_way=false, shared_encoders=false, hidden_size=100) {
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
    type: 'rte_attention',
    mode: mode,
    two_way: two_way,
    shared_encoders: shared_encoders,
    hidden_size: hidden_size,
    dropout: 0.1,
    text_field_embedder: {
      token_embedders: {
        tokens: {
          type: 'embedding',
          embedding_dim: std.parseInt(std.extVar('EMBEDDING_DIM')),
          pretrained_file: std.extVar('GLOVE_PATH'),
          trainable: false,
        },
      },
    },
  },
  data_loader: { type: 'tensorized', batch_sampler: { type: 'bucket', batch_size: 32 } },
  trainer: {
    // training curves: `tensorboard --logdir SERIALIZATION_DIR/log`, or `memplugins plot-metrics SERIALIZATION_DIR`
    callbacks: [{ type: 'tensorboard', should_log_parameter_statistics: false }],
    // fused: the same update as one kernel per parameter, several times faster than torch's default loop
    // (memplugins.compat.optimizer_options; benchmarks/speed/optimizer_step.py)
    optimizer: { type: 'adam', lr: 0.001, betas: [0.9, 0.999], weight_decay: 0.0001, fused: true },
    validation_metric: '+accuracy',
    num_epochs: std.parseInt(std.extVar('NUM_EPOCHS')),
    [if validation != '' then 'patience']: 5,
    cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')),
  },
}
