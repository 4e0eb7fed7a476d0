"""
`allennlp predict ARCHIVE FILE` needs a default predictor: every config under training_config/ has one, and it
predicts from the plain input a user would write (no parses for snli_tree_lstm), one line and a batch of two.
"""
import json

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader
from allennlp.predictors import Predictor

from tests.config_models import CONFIGS, REPO_ROOT, build_config_model

PAIR = {"premise": "A man (in red) plays a guitar.", "hypothesis": "A person plays music."}
INPUTS = {  # by config name prefix: (input, a key every prediction has)
    "snli_": (PAIR, "label_probs"),
    "sst": ({"sentence": "a lovely film with lovely performances ."}, "probs"),
    "ptb_": ({"sentence": "a man is playing a guitar ."}, "perplexity"),
    "wikiqa_": ({"question": "how are glacier caves formed ?",
                 "answers": ["A glacier cave is a cave formed within the ice of a glacier .", "It is 60 m high ."]},
                "ranking"),
    "yelp13_": ({"text": "the food was great . <sssss> service was slow but friendly ."}, "probs"),
    "iwslt14_": ({"source": "we are going to talk about the weather ."}, "predicted_tokens"),
}


def _input_for(config: str):
    name = config.split("/")[-1]
    return next(value for prefix, value in INPUTS.items() if name.startswith(prefix))


@pytest.mark.parametrize("config", CONFIGS)
def test_default_predictor_predicts_plain_inputs(config):
    built = build_config_model(config, num_instances=4)
    params = Params.from_file(str(REPO_ROOT / config))
    reader_params = params.get("validation_dataset_reader", None) or params["dataset_reader"]
    reader = DatasetReader.from_params(Params(reader_params.as_dict() if hasattr(reader_params, "as_dict") else reader_params))
    assert built.model.default_predictor, f"{type(built.model).__name__} has no default predictor"
    predictor = Predictor.by_name(built.model.default_predictor)(built.model.eval(), reader)
    example, key = _input_for(config)
    single = predictor.predict_json(example)
    assert key in single, sorted(single)
    json.dumps(single)  # what `allennlp predict` writes
    batch = predictor.predict_batch_json([example, example])
    assert len(batch) == 2 and all(key in output for output in batch)


def test_sentence_perplexity_is_the_exp_of_the_mean_token_nll():
    built = build_config_model("training_config/ptb_lstmn_lm.jsonnet", num_instances=4)
    reader = DatasetReader.from_params(Params.from_file(str(REPO_ROOT / "training_config/ptb_lstmn_lm.jsonnet"))["dataset_reader"])
    predictor = Predictor.by_name("sentence_perplexity")(built.model.eval(), reader)
    output = predictor.predict_json({"sentence": "a man is playing a guitar ."})
    assert output["tokens"][0] == "<S>" and output["tokens"][-1] == "</S>"
    assert len(output["token_log_probs"]) == len(output["tokens"]) - 1
    mean_nll = -sum(output["token_log_probs"]) / len(output["token_log_probs"])
    assert output["loss"] == pytest.approx(mean_nll, rel=1e-4)
    assert output["perplexity"] == pytest.approx(2.718281828 ** mean_nll, rel=1e-4)
    assert sum(p for _, p in output["next_tokens"]) <= 1.0


def test_answer_ranking_is_sorted_and_matches_single_pairs():
    config = "training_config/wikiqa_mma_nse_attention.jsonnet"
    built = build_config_model(config, num_instances=4)
    reader = DatasetReader.from_params(Params.from_file(str(REPO_ROOT / config))["dataset_reader"])
    predictor = Predictor.by_name("answer_ranking")(built.model.eval(), reader)
    example, _ = INPUTS["wikiqa_"]
    ranking = predictor.predict_json(example)["ranking"]
    assert [item["probability"] for item in ranking] == sorted((item["probability"] for item in ranking), reverse=True)
    for item in ranking:
        alone = predictor.predict_json({"question": example["question"], "answer": item["answer"]})
        assert alone["probability"] == pytest.approx(item["probability"], abs=1e-5)
        assert alone["question_tokens"][0] == "how"


def test_tree_model_without_parses_uses_right_branching_trees(caplog):
    config = "training_config/snli_tree_lstm.jsonnet"
    built = build_config_model(config, num_instances=4)
    reader = DatasetReader.from_params(Params.from_file(str(REPO_ROOT / config))["dataset_reader"])
    predictor = Predictor.by_name("entailment_pairs")(built.model.eval(), reader)
    plain = predictor.predict_json(PAIR)
    assert "right-branching" in caplog.text
    assert plain["premise_tokens"] == ["A", "man", "(", "in", "red", ")", "plays", "a", "guitar", "."]
    explicit = predictor.predict_json({
        "sentence1": PAIR["premise"], "sentence2": PAIR["hypothesis"],
        "sentence1_binary_parse": "( A ( man ( -LRB- ( in ( red ( -RRB- ( plays ( a ( guitar . ) ) ) ) ) ) ) ) )",
        "sentence2_binary_parse": "( A ( person ( plays ( music . ) ) ) )",
    })
    assert explicit["label_probs"] == pytest.approx(plain["label_probs"], abs=1e-6)
