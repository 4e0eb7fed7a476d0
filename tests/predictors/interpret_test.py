"""
AllenNLP's saliency interpreters and attackers on every shipped config through its default predictor (issue 95):
SimpleGradient, IntegratedGradient and SmoothGradient return finite, non-zero saliency with one value per token of
each input text; InputReduction and Hotflip run with their documented field (`tokens` where a model reads one text,
the hypothesis of a pair, the source of a translation; docs/interpret.md) and report on it. Models are built
untrained from each config's fixture data (enough instances for every label to be in the vocabulary).
"""
import functools
import math

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader
from allennlp.interpret.attackers import Hotflip, InputReduction
from allennlp.interpret.saliency_interpreters import IntegratedGradient, SimpleGradient, SmoothGradient
from allennlp.predictors import Predictor

from tests.config_models import CONFIGS, REPO_ROOT, build_config_model

PAIR = {"premise": "A man plays a guitar on a stage .", "hypothesis": "A person plays music ."}
SENTENCE = {"sentence": "a lovely film with lovely performances ."}
# config prefix: (input, the number of tokens of grad_input_1, grad_input_2, ..., the attacked field and the
# grad_input that is its gradient, Hotflip's vocabulary namespace); docs/interpret.md states the same choices
FAMILIES = {
    "snli": (PAIR, [5, 9], "hypothesis", "grad_input_1", "tokens"),  # grad_input_1: the hypothesis
    "sst": (SENTENCE, [7], "tokens", "grad_input_1", "tokens"),
    "wikiqa": ({"question": "how are caves formed ?", "answer": "caves form in ice when water melts ."}, [5, 8],
               "answer", "grad_input_2", "tokens"),  # grad_input_1: the question
    "yelp13": ({"text": "the food was cold . <sssss> the staff ignored us ."}, [10], "tokens", "grad_input_1",
               "tokens"),
    "iwslt14": ({"source": "we talk about the weather ."}, [6], "source_tokens", "grad_input_1", "source_tokens"),
    "ptb": ({"sentence": "the cat sat on the mat"}, [8], "source", "grad_input_1", "tokens"),
}
NAMES = [config.split("/")[-1][: -len(".jsonnet")] for config in CONFIGS]


def family(name: str):
    return FAMILIES[next(prefix for prefix in FAMILIES if name.startswith(prefix))]


@functools.lru_cache(maxsize=None)
def predictor_for(name: str) -> Predictor:
    config = f"training_config/{name}.jsonnet"
    built = build_config_model(config, num_instances=60)
    params = Params.from_file(str(REPO_ROOT / config))
    reader_params = params.get("validation_dataset_reader", None) or params["dataset_reader"]
    reader = DatasetReader.from_params(Params(reader_params.as_dict() if hasattr(reader_params, "as_dict") else reader_params))
    return Predictor.by_name(built.model.default_predictor)(built.model.eval(), reader)


@pytest.mark.parametrize("interpreter", [SimpleGradient, IntegratedGradient, SmoothGradient],
                         ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("name", NAMES)
def test_saliency_is_finite_nonzero_and_per_token(name, interpreter):
    example, lengths, _, _, _ = family(name)
    saliency = interpreter(predictor_for(name)).saliency_interpret_from_json(example)["instance_1"]
    values = [value for grads in saliency.values() for value in grads]
    assert values and all(math.isfinite(value) for value in values), saliency
    assert any(value > 0 for value in values), saliency
    # which grad_input is which text, as docs/interpret.md (and the README's example) say
    assert [len(saliency[f"grad_input_{n + 1}"]) for n in range(len(saliency))] == lengths, saliency


@pytest.mark.parametrize("name", NAMES)
def test_input_reduction_and_hotflip_run_on_the_documented_field(name):
    example, _, field, gradient, namespace = family(name)
    predictor = predictor_for(name)
    options = {} if field == "tokens" else {"input_field_to_attack": field}  # `tokens` is AllenNLP's default
    if gradient != "grad_input_1":
        options["grad_input_field"] = gradient
    reduced = InputReduction(predictor).attack_from_json(example, **options)
    original = reduced["original"]
    assert reduced["final"] and all(isinstance(token, str) for token in reduced["final"][0])
    assert 1 <= len(reduced["final"][0]) <= len(original)
    hotflip = Hotflip(predictor, vocab_namespace=namespace)
    hotflip.initialize()
    flipped = hotflip.attack_from_json(example, **options)
    assert flipped["final"] and len(flipped["final"][0]) == len(flipped["original"]) == len(original)


def test_a_reduced_tree_input_keeps_the_parse_of_the_words_left():
    """InputReduction deletes words; a tree model's parse then loses them and keeps its shape (tree_inputs)."""
    from memplugins.fields import BinaryTree
    from memplugins.fields.binary_tree_field import parse_binary_tree

    tree = parse_binary_tree("( ( A man ) ( plays ( a guitar ) ) )")
    kept = tree.restricted_to([0, 1, 2, 4])  # "a" deleted
    assert kept.leaves == ["A", "man", "plays", "guitar"]
    assert kept.children == [(0, 1), (2, 3), (4, 5)]  # (A man), (plays guitar), the root
    labelled = BinaryTree(["x", "y", "z"], [(0, 1), (3, 2)], ["1", "2", "3", "4", "0"])
    assert labelled.restricted_to([2]).labels == ["0"]  # one word left: it is the root, with the sentence's label
    assert labelled.restricted_to([0, 2]).labels == ["1", "3", "0"]


def test_the_flat_document_gives_the_sentences_outputs():
    """document_rating gives hierarchical_classifier the words in one field; the outputs are the list-of-sentences
    path's, for a batch of documents of different shapes."""
    import torch
    from allennlp.data import Batch

    from memplugins.predictors.document_rating import flat_document

    predictor = predictor_for("yelp13_nse_lstm")
    reader, model = predictor._dataset_reader, predictor._model
    documents = ["great food . <sssss> slow service , long wait .", "fine <sssss> a b c d e f <sssss> ok ."]
    nested = [reader.text_to_instance(text) for text in documents]
    flat = [flat_document(reader.text_to_instance(text)) for text in documents]
    outputs = []
    for instances in (nested, flat):
        batch = Batch(instances)
        batch.index_instances(model.vocab)
        with torch.no_grad():
            outputs.append(model(**batch.as_tensor_dict())["probs"])
    torch.testing.assert_close(outputs[0], outputs[1], rtol=0, atol=1e-6)
