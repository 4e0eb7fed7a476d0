"""
AllenNLP's saliency interpreters and attackers on every model family through its default predictor (issue 25):
each interpreter returns finite, non-zero saliency with one value per token of each input text; each attacker runs
and reports on the right field. Models are built untrained from each config's fixture data (enough instances for
every label to be in the vocabulary: a one-class softmax has no gradient).
"""
import functools
import math

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader
from allennlp.interpret.attackers import Hotflip, InputReduction
from allennlp.interpret.saliency_interpreters import IntegratedGradient, SimpleGradient, SmoothGradient
from allennlp.predictors import Predictor

from tests.config_models import REPO_ROOT, build_config_model

PAIR = {"premise": "A man plays a guitar .", "hypothesis": "A person plays music ."}
SENTENCE = {"sentence": "a lovely film with lovely performances ."}
FAMILIES = {  # config: (input, number of tokens of each text the saliency covers)
    "snli_rte_word_by_word": (PAIR, [6, 5]),
    "snli_mma_nse_attention": (PAIR, [6, 5]),
    "snli_lstmn_deep_fusion": (PAIR, [6, 5]),
    "snli_tree_lstm": (PAIR, [6, 5]),
    "sst5_tree_lstm": (SENTENCE, [7]),
    "sst5_tree_rnn": (SENTENCE, [7]),
    "sst2_iram_full": (SENTENCE, [7]),
    "sst5_nse": (SENTENCE, [7]),
    "sst_lstmn": (SENTENCE, [7]),
    "wikiqa_mma_nse_attention": ({"question": "how are caves formed ?", "answer": "caves form in ice ."}, [5, 5]),
    "yelp13_nse_nse": ({"text": "great food . <sssss> slow service ."}, None),
    "iwslt14_nse_nse": ({"source": "we talk about the weather ."}, [6]),
    "ptb_lstmn_lm": ({"sentence": "the cat sat on the mat"}, [8]),
}


@functools.lru_cache(maxsize=None)
def predictor_for(name: str) -> Predictor:
    config = f"training_config/{name}.jsonnet"
    built = build_config_model(config, num_instances=60)
    params = Params.from_file(str(REPO_ROOT / config))
    reader_params = params.get("validation_dataset_reader", None) or params["dataset_reader"]
    reader = DatasetReader.from_params(Params(reader_params.as_dict() if hasattr(reader_params, "as_dict") else reader_params))
    return Predictor.by_name(built.model.default_predictor)(built.model.eval(), reader)


# SimpleGradient on every family; the two that run it 10 times over, on one family per kind of input (time)
CASES = [(name, SimpleGradient) for name in FAMILIES] + [
    (name, interpreter) for interpreter in (IntegratedGradient, SmoothGradient)
    for name in ("snli_mma_nse_attention", "sst5_tree_lstm", "iwslt14_nse_nse", "yelp13_nse_nse")
]


@pytest.mark.parametrize("name, interpreter", CASES)
def test_saliency_is_finite_nonzero_and_per_token(name, interpreter):
    example, lengths = FAMILIES[name]
    saliency = interpreter(predictor_for(name)).saliency_interpret_from_json(example)["instance_1"]
    values = [value for grads in saliency.values() for value in grads]
    assert values and all(math.isfinite(value) for value in values), saliency
    assert any(value > 0 for value in values), saliency
    if lengths is not None:
        assert sorted(len(grads) for grads in saliency.values()) == sorted(lengths), saliency


@pytest.mark.parametrize("name", ["snli_mma_nse", "sst5_tree_lstm", "sst_lstmn"])
def test_attackers_run(name):
    example = PAIR if name.startswith("snli") else SENTENCE
    field = "hypothesis" if name.startswith("snli") else "tokens"
    predictor = predictor_for(name)
    reduced = InputReduction(predictor).attack_from_json(example, input_field_to_attack=field, grad_input_field="grad_input_1")
    assert reduced["final"] and all(isinstance(token, str) for token in reduced["final"][0])
    hotflip = Hotflip(predictor)
    hotflip.initialize()
    flipped = hotflip.attack_from_json(example, input_field_to_attack=field, grad_input_field="grad_input_1")
    assert flipped["final"] and len(flipped["final"][0]) == len(flipped["original"])
