"""
Structure-aware fuzzing of every memplugins predictor's JSON input (issue 24): a good input changed the way bad
inputs are (a value of another JSON type, deep nesting, a 1 MB string, an unpaired surrogate, non-ASCII digits, a key
missing, not an object). Accepted outcomes: a prediction that JSON can write, or an `InvalidInputError` saying what
is wrong. Seeded, so a failure reproduces.
"""
import json
import random

import pytest

from memplugins.predictors.inputs import InvalidInputError
from tests.predictors.input_lines_test import predictor_for
from tests.readers.structured_fuzz_test import WRONG_VALUES

MUTATIONS = 12
CASES = {
    "entailment_pairs": ("training_config/snli_mma_nse.jsonnet", {"premise": "A man plays.", "hypothesis": "A person plays."}),
    "answer_ranking": ("training_config/wikiqa_mma_nse_attention.jsonnet", {"question": "who is it ?", "answers": ["he .", "she ."]}),
    "document_rating": ("training_config/yelp13_nse_nse.jsonnet", {"text": "good food . <sssss> nice staff ."}),
    "sentence_perplexity": ("training_config/ptb_lstmn_lm.jsonnet", {"sentence": "the cat sat on the mat"}),
    "sentence_classifier (tree_lstm)": ("training_config/sst2_tree_lstm.jsonnet", {"sentence": "a lovely film ."}),
    "sentence_classifier (iram)": ("training_config/sst2_iram_full.jsonnet", {"sentence": "a lovely film ."}),
}


def mutate(example, rng: random.Random):
    example = json.loads(json.dumps(example))
    kind = rng.choice(["wrong value", "wrong value", "list item", "drop key", "not an object"])
    key = rng.choice(list(example))
    if kind == "wrong value":
        example[key] = rng.choice(WRONG_VALUES)
    elif kind == "list item" and isinstance(example[key], list):
        example[key][rng.randrange(len(example[key]))] = rng.choice(WRONG_VALUES)
    elif kind == "drop key":
        del example[key]
    elif kind == "not an object":
        return rng.choice([[example], "text", 7, None])
    return example


@pytest.mark.parametrize("name", CASES)
def test_mutated_inputs_give_predictions_or_an_invalid_input_error(name):
    config, good = CASES[name]
    predictor = predictor_for(config)
    rng = random.Random(f"predictor-{name}")
    for attempt in range(MUTATIONS):
        example = mutate(good, rng)
        try:
            json.dumps(predictor.predict_json(example))
        except InvalidInputError:
            pass
        except Exception as error:  # noqa: BLE001
            pytest.fail(f"{name}, mutation {attempt} ({str(example)[:120]}): {type(error).__name__}: {str(error)[:300]}")
