// Rocktäschel et al. (2016), section 4: conditional encoding with one LSTM shared by premise and hypothesis, at
// the hidden size the paper gives its shared benchmark LSTM, k = 159 ("a single LSTM with a hidden size of
// 159"), chosen so it has at least as many parameters as the attentive models (see snli_rte.libsonnet).
(import 'snli_rte.libsonnet')(mode='conditional', shared_encoders=true, hidden_size=159)
