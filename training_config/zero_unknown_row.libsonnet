// The initializer regex that zeroes the @@UNKNOWN@@ row of the token table (memplugins' `zero_unknown_row`), for
// every config with glove_vocabulary.libsonnet. AllenNLP fills that row with a random draw, and with the training
// words in the vocabulary no training token ever trains it, yet a test or user word neither training nor GloVe
// knows meets it: zero is the neutral vector instead. Training is unchanged in every other parameter
// (memplugins/initializers/zero_unknown_row.py). Use: `initializer: { regexes: [import 'zero_unknown_row.libsonnet'] }`.
['^_text_field_embedder\\.token_embedder_tokens\\.weight$', { type: 'zero_unknown_row' }]
