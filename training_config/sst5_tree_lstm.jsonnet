// Tree LSTM (Le and Zuidema 2015), SST fine-grained (5 classes); see sst_tree_lstm.libsonnet.
(import 'sst_tree_lstm.libsonnet')(granularity='5-class')
