// LSTMN language model on the Penn Treebank (Cheng et al. 2016, section 5.1), built from allennlp-models'
// `language_model` with the `lstmn` encoder as its contextualizer and its `simple_language_modeling` reader.
// Data: PTB_TRAIN, PTB_VALIDATION (Mikolov's ptb.{train,valid}.txt; default: a tiny PTB-format sample made from the
// shipped SNLI sentences, since the PTB text is LDC-licensed). Each line is one sentence, read between <S> and </S>.
// Settings (section 5.1): embeddings 150, hidden/memory 300, SGD lr 0.65 decayed by 0.85 when validation perplexity
// does not improve, gradient norm clipped at 5, batch 40. LSTMN_LAYERS: 1 (paper: 1 and 3; ptb_lstmn_lm_3layers.jsonnet).
// Deviation: dropout 0.5 on the LSTMN outputs (before the softmax) and between layers. Section 5.1 states none; a
// 300-unit model on the 1M-word PTB overfits within a few epochs without it (0.5 is Zaremba et al.'s 2014 PTB
// setting, the baselines' usual regulariser). LM_DROPOUT=0 gives the paper's setting.
// The update: Torch LM code of the time (the paper's) backpropagates the NLL summed over a sentence's tokens and
// averaged over the batch; allennlp-models' language_model averages over the tokens, which makes every gradient
// L times smaller (L: the mean tokens per sentence, 22.1 on PTB train with </S>). At lr 0.65 on the token mean, a
// run learns about L times slower (measured: valid perplexity 431 after 3 epochs, benchmarks/replication/replicate.py).
// So the same update is taken in AllenNLP's convention: lr 0.65 L and the clipping norm 5 / L
// (clip(g / L, 5 / L) * 0.65 L = clip(g, 5) * 0.65 for a sentence of L tokens).
// Test perplexity: allennlp evaluate ARCHIVE ptb.test.txt (batch-averaged), or benchmarks/replication/ptb_token_perplexity.py
// (the paper's token-weighted PPL).
local layers = std.parseInt(std.extVar('LSTMN_LAYERS'));
local tokens_per_sentence = 22.1;
{
  dataset_reader: {
    type: 'checked_simple_language_modeling',  // allennlp-models' reader behind file:line checks
    max_tokens: 400,  // PTB's longest sentence has 82 tokens; this bounds a pathological prediction input
    tokenizer: { type: 'whitespace' },
    // the LSTMN's cost is quadratic in length: sentences over 400 tokens are left out of the data (PTB's longest
    // has 83), and `sentence_perplexity` refuses them with a clear error. Override with -o.
    max_sequence_length: 400,
    token_indexers: { tokens: { type: 'single_id' } },
    start_tokens: ['<S>'],
    end_tokens: ['</S>'],
  },
  train_data_path: std.extVar('PTB_TRAIN'),
  validation_data_path: std.extVar('PTB_VALIDATION'),
  model: {
    type: 'language_model',
    bidirectional: false,
    dropout: std.parseJson(std.extVar('LM_DROPOUT')),
    text_field_embedder: { token_embedders: { tokens: { type: 'embedding', embedding_dim: 150 } } },
    contextualizer: { type: 'lstmn', input_size: 150, hidden_size: 300, num_layers: layers, dropout: std.parseJson(std.extVar('LM_DROPOUT')) },
  },
  data_loader: { type: 'tensorized', batch_sampler: { type: 'bucket', batch_size: 40 } },
  trainer: {
    // training curves: `tensorboard --logdir SERIALIZATION_DIR/log`, or `memplugins plot-metrics SERIALIZATION_DIR`
    callbacks: [{ type: 'tensorboard', should_log_parameter_statistics: false }],
    optimizer: { type: 'sgd', lr: 0.65 * tokens_per_sentence },
    // mode 'max': AllenNLP steps the scheduler with the validation metric's combined score, -perplexity here,
    // which rises as perplexity falls ('min' would decay at every epoch that improves: every epoch)
    learning_rate_scheduler: { type: 'reduce_on_plateau', mode: 'max', factor: 0.85, patience: 0, threshold: 0.01 },
    grad_norm: 5.0 / tokens_per_sentence,
    validation_metric: '-perplexity',
    num_epochs: std.parseInt(std.extVar('NUM_EPOCHS')),
    cuda_device: std.parseInt(std.extVar('CUDA_DEVICE')),
  },
}
