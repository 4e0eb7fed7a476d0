// IRAM's BiLSTM baseline (Tutek and Šnajder 2018, section 4.1): "a maxout classifier over the last hidden state of
// the encoder BiLSTM", no attention, on binary SST; the vanilla encoder's BiLSTM and every other setting of
// sst_iram.libsonnet (iram with num_iterations 0; no attention, so no regulariser).
(import 'sst_iram.libsonnet')(granularity='2-class', full=false) + {
  model+: { encoder+: { num_iterations: 0, attention_penalty: 0.0 } },
}
