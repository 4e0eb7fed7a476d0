"""
Issue 24's table, prediction rows: each bad input line of `allennlp predict` is a `MalformedInputError` naming the
input file and line and what is wrong with which key (`memplugins.predictors.input_lines` and `.inputs`), for every
memplugins predictor. The command's exit and output: `tests/cli_test.py`.
"""
import functools
import json

import pytest
from allennlp.commands.predict import _PredictManager
from allennlp.predictors import Predictor

from allennlp.common import Params
from allennlp.data import DatasetReader

from memplugins.readers.errors import MalformedInputError
from tests.config_models import REPO_ROOT, build_config_model


@functools.lru_cache(maxsize=None)
def predictor_for(config: str) -> Predictor:
    """The config's default predictor over a model built from its fixture data (untrained: inputs are the point)."""
    built = build_config_model(config, num_instances=4)
    params = Params.from_file(str(REPO_ROOT / config))
    reader_params = params.get("validation_dataset_reader", None) or params["dataset_reader"]
    reader = DatasetReader.from_params(Params(reader_params.as_dict() if hasattr(reader_params, "as_dict") else reader_params))
    return Predictor.by_name(built.model.default_predictor)(built.model.eval(), reader)

GOOD_PAIR = {"premise": "A man plays.", "hypothesis": "A person plays."}
PAIR_ROWS = [
    ('{"premise": "A man plays.", "hypothesis": ""}', "'hypothesis' is empty"),
    ('{"premise": "A man plays.", "hypothesis": "   "}', "'hypothesis' is empty"),
    ('{"premise": "A man plays.", "hypothesis": 5}', "'hypothesis' must be a string, got a JSON number"),
    ('{"premise": null, "hypothesis": "x"}', "'premise' must be a string, got a JSON null"),
    ('{"premise": "x"}', "needs 'hypothesis' or 'sentence2'"),
    ('[{"premise": "a", "hypothesis": "b"}]', "expected a JSON object, got a JSON array"),
    ("premise: a", "not JSON"),
    ('{"premise": "a \\ud800", "hypothesis": "b"}', "unpaired surrogate"),
    ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
    (json.dumps({"premise": "word " * 200_000, "hypothesis": "x"})[:-1] + ', "hypothesis": 7}', "must be a string"),
]


def predict_lines(predictor: Predictor, tmp_path, lines):
    path = tmp_path / "input.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    manager = _PredictManager(predictor, str(path), str(tmp_path / "out.jsonl"), batch_size=1,
                              print_to_console=False, has_dataset_reader=False)
    manager.run()
    return path


@pytest.mark.parametrize("line, message", PAIR_ROWS)
def test_entailment_pairs(tmp_path, line, message):
    predictor = predictor_for("training_config/snli_rte_conditional.jsonnet")
    with pytest.raises(MalformedInputError, match=f"input.jsonl:3: .*{message}"):
        predict_lines(predictor, tmp_path, [json.dumps(GOOD_PAIR), "", line])


@pytest.mark.parametrize("config, good, bad, message", [
    ("training_config/wikiqa_mma_nse_attention.jsonnet", {"question": "who ?", "answers": ["he .", "she ."]},
     {"question": "who ?", "answers": []}, "'answers' must be a non-empty list of strings, got \\[\\]"),
    ("training_config/wikiqa_mma_nse_attention.jsonnet", {"question": "who ?", "answer": "he ."},
     {"question": "who ?", "answers": ["he .", 3]}, "answers\\[1\\] must be a string"),
    ("training_config/yelp13_nse_nse.jsonnet", {"text": "good food . <sssss> nice ."}, {"text": ""},
     "'text' is empty"),
    ("training_config/yelp13_nse_nse.jsonnet", {"text": "good food ."}, {"text": " <sssss> "},
     "at least one sentence"),
    ("training_config/ptb_lstmn_lm.jsonnet", {"sentence": "the cat sat"}, {"sentence": None},
     "'sentence' must be a string, got a JSON null"),
])
def test_other_predictors(tmp_path, config, good, bad, message):
    predictor = predictor_for(config)
    with pytest.raises(MalformedInputError, match=f"input.jsonl:2: .*{message}"):
        predict_lines(predictor, tmp_path, [json.dumps(good), json.dumps(bad)])
