// Tree LSTM (Le and Zuidema 2015), SST binary (neutral nodes unlabelled, neutral sentences dropped); see
// sst_tree_lstm.libsonnet.
(import 'sst_tree_lstm.libsonnet')(granularity='2-class')
