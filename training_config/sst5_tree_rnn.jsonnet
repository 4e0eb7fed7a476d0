// Le and Zuidema's (2015) main comparison: the plain recursive network (`tree_rnn`, p = g(W_1 x + W_2 y + b)) on
// fine-grained SST, with every setting of the LSTM-RNN's config (sst_tree_lstm.libsonnet).
(import 'sst_tree_lstm.libsonnet')(granularity='5-class', cell='tree_rnn')
