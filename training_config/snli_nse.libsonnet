// NSE pair classifiers on SNLI (Munkhdalai and Yu 2017, section 4.1); see memplugins/models/nse_pair_classifier.py.
// Data: SNLI_TRAIN, SNLI_VALIDATION ('' trains without validation), GLOVE_PATH, EMBEDDING_DIM, NUM_EPOCHS
// (the paper trains 40 epochs: NUM_EPOCHS=40; the default is the shared 10).
// Settings (section 4.1): k = 300, batch 128, Adam lr 3e-4, L2 3e-5, dropout 0.3, fixed embeddings (the paper:
// 300d GloVe 840B, so memory slots are the embeddings themselves; with 50d vectors the memory is initialised
// through a linear projection to k), MLP with one 1024-unit ReLU layer.
local validation = std.extVar('SNLI_VALIDATION');
function(variant, hidden_size=300) {
  local nse(extra_memories) = {
    type: 'nse', hidden_size: hidden_size, num_extra_memories: extra_memories, dropout: 0.3,
    compose_size: (2 + extra_memories) * hidden_size, compose_activation: 'linear',
  },
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
    type: 'nse_pair_classifier',
    // variant 'nse': one NSE for both sentences; 'mma_nse': the hypothesis NSE reads and writes the premise's memory
    // (eq. 7-15); 'mma_nse_attention': and the premise is blended by attention. f_c as the authors' released code:
    // one linear layer that keeps its input's size, (2 + n) k
    premise_encoder: nse(0),
    [if variant != 'nse' then 'hypothesis_encoder']: nse(1),
    premise_attention: variant == 'mma_nse_attention',
    dropout: 0.3,  // before the softmax layer (the NSEs' own is in nse(n))
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
    classifier_feedforward: { input_dim: 4 * hidden_size, num_layers: 1, hidden_dims: 1024, activations: 'relu' },
  },
  data_loader: { type: 'tensorized', batch_sampler: { type: 'bucket', batch_size: 128 } },
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
