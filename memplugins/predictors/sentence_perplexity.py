import math
from typing import Any, Dict, List, Tuple

import numpy

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.nn import util as nn_util
from allennlp.predictors.predictor import Predictor
from allennlp_models.lm.models.language_model import LanguageModel

from memplugins.predictors.bounded import NotesTruncation
from memplugins.predictors.inputs import InvalidInputError, JsonObjectLines, input_text


@Predictor.register("sentence_perplexity")
class SentencePerplexityPredictor(NotesTruncation, JsonObjectLines, Predictor):
    """
    `allennlp predict` for allennlp-models' `language_model` (e.g. `ptb_lstmn_lm`, whose contextualizer is an LSTMN;
    the default predictor of `language_model` once memplugins is imported). Input lines: `{"sentence": "..."}`.
    Output per sentence: `tokens` (with the reader's start / end symbols), `loss` (mean negative log-likelihood of
    each next token, nats), `perplexity` (exp of it), `token_log_probs` (log p of each token given those before
    it, from the second token on), and `next_tokens`: the `top_k` most likely tokens after the last one with
    their probabilities (after `</S>` this is what the model expects to start a sentence).

    Sentences are scored one at a time: the model's loss is an average over its batch, so a batch would mix them.
    Needs the full softmax (`sparse_embeddings` false, no sampled softmax), as `ptb_lstmn_lm` uses.

    Registered as a `Predictor` with name "sentence_perplexity".

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
    top_k : `int`, optional (default = `5`)
    frozen : `bool`, optional (default = `True`)
    """

    def __init__(self, model: Model, dataset_reader: DatasetReader, top_k: int = 5, frozen: bool = True) -> None:
        super().__init__(model, dataset_reader, frozen)
        softmax = getattr(model, "_softmax_loss", None)
        if not hasattr(softmax, "softmax_w") or getattr(model, "_bidirectional", False):
            raise ConfigurationError("sentence_perplexity needs a unidirectional language_model with a full softmax")
        self._top_k = top_k

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, numpy.ndarray]) -> List[Instance]:
        """For AllenNLP's interpreters: a language model's target is its input (each next token), so the instance
        itself; the saliency is that of the sentence's likelihood."""
        return [instance]

    def get_gradients(self, instances: List[Instance]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """As `Predictor.get_gradients`. An attacker that deletes words (InputReduction) reaches a one-token
        sentence, which has no next token to predict: the loss is a constant there, and its gradient with respect
        to every word is zero, which is what this returns (AllenNLP's would fail on a loss without a graph)."""
        captured: List[torch.Tensor] = []
        handle = nn_util.find_embedding_layer(self._model).register_forward_hook(
            lambda module, inputs, output: captured.append(output))
        forward = self._model.forward

        def forward_with_a_differentiable_loss(**inputs):
            outputs = forward(**inputs)
            if not outputs["loss"].requires_grad and captured:
                outputs["loss"] = outputs["loss"] + 0.0 * captured[-1].sum()
            return outputs

        self._model.forward = forward_with_a_differentiable_loss
        try:
            return super().get_gradients(instances)
        finally:
            del self._model.forward  # the instance attribute: the class's forward again
            handle.remove()

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        instance = self._dataset_reader.text_to_instance(input_text(json_dict, ("sentence",), "sentence_perplexity"))
        limit = getattr(self._dataset_reader, "_max_sequence_length", math.inf)
        if len(instance["source"]) > limit:
            raise InvalidInputError(f"sentence_perplexity: the sentence has {len(instance['source'])} tokens; this "
                                    f"model's reader takes at most {limit} (its max_sequence_length)")
        return instance

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        return [self.predict_instance(instance) for instance in instances]

    def predict_instance(self, instance: Instance) -> JsonDict:
        self._dataset_reader.apply_token_indexers(instance)
        output = self._model.forward_on_instance(instance)
        softmax = self._model._softmax_loss
        vocab = self._model.vocab
        with torch.no_grad():
            embeddings = torch.as_tensor(output["lm_embeddings"])  # (T, d), no dropout
            weight, bias = softmax.softmax_w.detach().cpu(), softmax.softmax_b.detach().cpu()
            # (T, vocab - 1): log p(w_{t+1} | w_<=t); the softmax has no padding class, so class j is vocabulary id j + 1
            log_probs = torch.log_softmax(embeddings.float() @ weight + bias, dim=-1)
        tokens = [token.text for token in instance["source"].tokens]
        ids = [vocab.get_token_index(token) for token in tokens]
        token_log_probs = [float(log_probs[t, ids[t + 1] - 1]) for t in range(len(tokens) - 1)]
        # AllenNLP's softmax has vocabulary-size classes for the ids 1.. (no padding class): its last class stands
        # for no token and is never a target, so it is left out
        last = log_probs[-1, : vocab.get_vocab_size() - 1].exp()
        top = torch.topk(last, min(self._top_k, last.numel()))
        loss = float(output["loss"])
        return sanitize({
            "tokens": tokens,
            "loss": loss,
            "perplexity": float(torch.tensor(loss).exp()),
            "token_log_probs": token_log_probs,
            "next_tokens": [[vocab.get_token_from_index(int(i) + 1), float(p)] for p, i in zip(top.values, top.indices)],
        })


# allennlp-models' language_model has no default predictor, so `allennlp predict` failed with NotImplementedError
if LanguageModel.default_predictor is None:
    LanguageModel.default_predictor = "sentence_perplexity"
