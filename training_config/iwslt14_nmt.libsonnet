// Shared-memory NMT (Munkhdalai and Yu 2017, section 4.5) through allennlp-models' composed_seq2seq +
// auto_regressive_seq_decoder, with BeamSearch and the BLEU metric.
// Data: IWSLT_TRAIN, IWSLT_VALIDATION: path prefixes of line-aligned files PREFIX.en / PREFIX.de (reader
// `parallel_text`, English -> German as in the paper; default: a 300-pair sample of IWSLT14 valid shipped under
// fixtures/iwslt14), GLOVE_PATH, EMBEDDING_DIM, NUM_EPOCHS (the paper: 40), BEAM_SIZE (the paper decodes greedily:
// 1). Settings: pairs longer than 25 words dropped, fixed GloVe for the English source (the paper: 300d 840B),
// learned 300-d German embeddings, 300 units, the 25,000 most frequent German words, batch 128, Adam (lr 1e-3 for
// LSTM-LSTM, 3e-4 otherwise), L2 3e-5.
// Deviations: the paper regularises with "20% input dropouts" and output dropout; allennlp-models'
// composed_seq2seq, auto_regressive_seq_decoder and lstm_cell decoder net have no dropout, so here only the NSEs
// drop out (0.2 on their read outputs o_t and 0.3 on their write outputs h_t, which also reach the keys) and the
// LSTM-LSTM encoder drops 0.2 between its two layers; the LSTM decoders have none. The paper's LSTM decoders have
// two layers; lstm_cell has one (a two-layer decoder net is not in allennlp-models).
local embedding_dim = std.parseInt(std.extVar('EMBEDDING_DIM'));
local hidden = 300;
local validation = std.extVar('IWSLT_VALIDATION');
function(encoder, decoder_net, lr) {
  dataset_reader: {
    type: 'parallel_text',
    source_suffix: 'en',
    target_suffix: 'de',
    max_length: 25,
    max_tokens: 200,  // the source of a prediction input (training pairs are under max_length)
    lowercase: true,
    source_add_start_token: false,
    source_add_end_token: false,
    source_token_indexers: { tokens: { type: 'single_id', namespace: 'source_tokens' } },
    target_token_indexers: { tokens: { type: 'single_id', namespace: 'target_tokens' } },
  },
  train_data_path: std.extVar('IWSLT_TRAIN'),
  vocabulary: { max_vocab_size: { target_tokens: 25000 } },  // section 4.5: the 25,000 most frequent German words
  [if validation != '' then 'validation_data_path']: validation,
  model: {
    type: 'composed_seq2seq',
    source_text_embedder: {
      token_embedders: {
        tokens: {
          type: 'embedding', embedding_dim: embedding_dim, pretrained_file: std.extVar('GLOVE_PATH'),
          vocab_namespace: 'source_tokens', trainable: false,
        },
      },
    },
    encoder: encoder(embedding_dim, hidden),
    decoder: {
      type: 'auto_regressive_seq_decoder',
      decoder_net: decoder_net(hidden),
      target_embedder: { embedding_dim: hidden, vocab_namespace: 'target_tokens' },
      target_namespace: 'target_tokens',
      beam_search: { beam_size: std.parseInt(std.extVar('BEAM_SIZE')), max_steps: 50 },
      tensor_based_metric: { type: 'bleu' },
    },
  },
  data_loader: { type: 'tensorized', batch_sampler: { type: 'bucket', batch_size: 128, sorting_keys: ['source_tokens'] } },
  validation_data_loader: { type: 'tensorized', batch_size: 128 },
  trainer: {
    // training curves: `tensorboard --logdir SERIALIZATION_DIR/log`, or `memplugins plot-metrics SERIALIZATION_DIR`
    callbacks: [{ type: 'tensorboard', should_log_parameter_statistics: false }],
    // fused: the same update as one kernel per parameter, several times faster than torch's default loop
    // (memplugins.compat.optimizer_options; benchmarks/speed/optimizer_step.py)
    optimizer: { type: 'adam', lr: lr, weight_decay: 0.00003, fused: true },
    validation_metric: '+BLEU',
    num_epochs: std.parseInt(std.extVar('NUM_EPOCHS')),
    cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')),
  },
}
