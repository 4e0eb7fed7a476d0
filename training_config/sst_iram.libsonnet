// IRAM (Tutek and Šnajder 2018) on the Stanford Sentiment Treebank; see memplugins/encoders/iram.py and
// memplugins/models/iram_classifier.py. Trained on every labelled phrase (allennlp-models' `sst_tokens` with
// use_subtrees, as the paper's 56,400 / 94,200 instances), validated on sentences.
// Data: SST_TRAIN, SST_VALIDATION (PTB-format trees; default: 40 shipped dev trees), GLOVE_PATH, EMBEDDING_DIM,
// NUM_EPOCHS, IRAM_PENALTY (γ; default 0.0003, the paper's; 0 turns the regulariser off).
// Settings (section 4.2): T = 3, BiLSTM h = 400 per direction (the paper searched 400-1000), Adam with AMSGrad
// lr 3e-4, weight decay 3e-5, gradient norm clipped to 5 (the value is lost in our copy of the paper), batch 32,
// dropout 0.2 (searched 0.1-0.4), maxout two 200-d layers of pool size 4, fixed GloVe (the paper: 300d Common
// Crawl, standardised (done here too), plus 100d character n-gram vectors, which are not obtainable offline; AllenNLP's character
// CNN token embedder is the substitute: char_cnn=true, as in sst2_iram_full_char_cnn.jsonnet).
local embedding_dim = std.parseInt(std.extVar('EMBEDDING_DIM'));
local hidden_size = 400;
function(granularity, full, char_cnn=false) {
  local char_dim = 100,
  local input_dim = embedding_dim + (if char_cnn then char_dim else 0),
  local reader(subtrees) = {
    type: 'checked_sst_tokens',  // allennlp-models' sst_tokens behind file:line checks
    max_tokens: 200,  // SST's longest sentence has 56 tokens; this bounds a pathological prediction input
    granularity: granularity,
    use_subtrees: subtrees,
    token_indexers: { tokens: { type: 'single_id', lowercase_tokens: true } } + (
      if char_cnn then { token_characters: { type: 'characters', min_padding_length: 5 } } else {}
    ),
  },
  dataset_reader: reader(true),
  validation_dataset_reader: reader(false),
  vocabulary: import 'glove_vocabulary.libsonnet',  // the training and validation words and GLOVE_PATH's
  train_data_path: std.extVar('SST_TRAIN'),
  validation_data_path: std.extVar('SST_VALIDATION'),
  model: {
    initializer: { regexes: [import 'zero_unknown_row.libsonnet'] },  // a zero @@UNKNOWN@@ row
    type: 'iram_classifier',
    text_field_embedder: {
      token_embedders: {
        // section 4.2: the GloVe vectors standardised (memplugins' standardized_embedding), fixed
        tokens: { type: 'standardized_embedding', embedding_dim: embedding_dim, pretrained_file: std.extVar('GLOVE_PATH'), trainable: false },
      } + (
        // the substitute for the paper's character n-gram vectors: a character CNN (n = 2..5), learned
        if char_cnn then {
          token_characters: {
            type: 'character_encoding',
            embedding: { embedding_dim: 16, vocab_namespace: 'token_characters' },  // AllenNLP's default namespace is 'tokens'
            encoder: { type: 'cnn', embedding_dim: 16, num_filters: 25, ngram_filter_sizes: [2, 3, 4, 5] },
          },
        } else {}
      ),
    },
    encoder: {
      type: 'iram',
      input_dim: input_dim,
      hidden_size: hidden_size,
      bidirectional: true,  // hidden_size per direction (the encoder's default reads it as the output size, as lstm's)
      num_iterations: 3,
      num_context_layers: if full then 2 else 1,
      num_query_layers: if full then 1 else 0,
      embedding_highway_layers: if full then 2 else 0,
      query_highway: full,
      attention_penalty: std.parseJson(std.extVar('IRAM_PENALTY')),
      dropout: 0.2,
    },
    maxout: { input_dim: 2 * hidden_size, num_layers: 2, output_dims: 200, pool_sizes: 4, dropout: 0.2 },
    dropout: 0.2,
  },
  data_loader: { type: 'tensorized', batch_sampler: { type: 'bucket', batch_size: 32 } },
  trainer: {
    // training curves: `tensorboard --logdir SERIALIZATION_DIR/log`, or `memplugins plot-metrics SERIALIZATION_DIR`
    callbacks: [{ type: 'tensorboard', should_log_parameter_statistics: false }],
    // fused: the same update as one kernel per parameter, several times faster than torch's default loop
    // (memplugins.compat.optimizer_options; benchmarks/speed/optimizer_step.py)
    optimizer: { type: 'adam', lr: 0.0003, amsgrad: true, weight_decay: 0.00003, fused: true },
    grad_norm: 5.0,
    validation_metric: '+accuracy',
    num_epochs: std.parseInt(std.extVar('NUM_EPOCHS')),
    cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')),
  },
}
