// An allennlp-models style config, used unchanged by memplugins' README example: allennlp-models' `snli` reader
// with its default tokenizer (AllenNLP's `spacy`, which memplugins keeps offline), ESIM (Chen et al. 2017) from
// allennlp-models with unidirectional LSTM encoders; data paths from the variables every memplugins config reads
// (SNLI_TRAIN, SNLI_VALIDATION, GLOVE_PATH: the shipped samples unless set), so it runs from any folder. Swap the encoders to memplugins' LSTMN with
//   -o '{"model.encoder.type": "lstmn", "model.inference_encoder.type": "lstmn"}'
{
  dataset_reader: { type: 'snli', token_indexers: { tokens: { type: 'single_id', lowercase_tokens: true } } },
  train_data_path: std.extVar('SNLI_TRAIN'),
  validation_data_path: std.extVar('SNLI_VALIDATION'),
  model: {
    type: 'esim',
    dropout: 0.5,
    text_field_embedder: {
      token_embedders: {
        tokens: { type: 'embedding', embedding_dim: 50, pretrained_file: std.extVar('GLOVE_PATH'), trainable: false },
      },
    },
    encoder: { type: 'lstm', input_size: 50, hidden_size: 100, num_layers: 1, bidirectional: false },
    matrix_attention: { type: 'dot_product' },
    projection_feedforward: { input_dim: 400, hidden_dims: 100, num_layers: 1, activations: 'relu' },
    inference_encoder: { type: 'lstm', input_size: 100, hidden_size: 100, num_layers: 1, bidirectional: false },
    output_feedforward: { input_dim: 400, num_layers: 1, hidden_dims: 100, activations: 'relu', dropout: 0.5 },
    output_logit: { input_dim: 100, num_layers: 1, hidden_dims: 3, activations: 'linear' },
  },
  data_loader: { batch_sampler: { type: 'bucket', batch_size: 32 } },
  trainer: { optimizer: { type: 'adam', lr: 0.0004 }, validation_metric: '+accuracy', num_epochs: 5, grad_norm: 10.0 },
}
