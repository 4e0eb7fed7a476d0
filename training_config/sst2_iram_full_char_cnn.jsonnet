// IRAM full encoder, SST binary, with a character CNN beside GloVe (the substitute for the paper's character n-gram
// vectors, which are not obtainable offline); see sst_iram.libsonnet.
(import 'sst_iram.libsonnet')(granularity='2-class', full=true, char_cnn=true)
