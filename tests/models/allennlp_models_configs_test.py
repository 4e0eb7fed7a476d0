"""
True drop-in (issue 15): allennlp-models' own published configs (settings copied into tests/fixtures/allennlp_models/,
see its README) train one epoch on a few local instances and predict with nothing changed but an encoder's `type`:
`lstmn` / `nse` for the Seq2Seq encoders of `esim` and `bcn`, `tree_lstm` / `iram` for `basic_classifier`'s
Seq2Vec encoder. (`decomposable_attention` has no encoder to swap.) The predictions then carry the encoders'
internals through the `with_encoder_internals` predictor, and `attention-map` draws them.
"""
import json
from argparse import Namespace

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from memplugins.commands.attention_map import run_attention_map
from tests.conftest import TEST_FIXTURES

CONFIGS = TEST_FIXTURES / "allennlp_models"
SNLI = "fixtures/snli/tiny.jsonl"
SST = str(CONFIGS / "sst_tiny.txt")
PAIR = {"premise": "Two dogs run on the beach.", "hypothesis": "Animals are outside."}
SENTENCE = {"sentence": "a lovely film with lovely performances ."}

CASES = [
    # (config, the keys whose type changes, the new type, data, prediction input)
    ("esim.jsonnet", ["encoder", "inference_encoder"], "lstmn", SNLI, PAIR),
    ("esim.jsonnet", ["encoder", "inference_encoder"], "nse", SNLI, PAIR),
    ("biattentive_classification_network.jsonnet", ["encoder", "integrator"], "lstmn", SST, SENTENCE),
    ("biattentive_classification_network.jsonnet", ["encoder", "integrator"], "nse", SST, SENTENCE),
    ("basic_stanford_sentiment_treebank.jsonnet", ["seq2vec_encoder"], "tree_lstm", SST, SENTENCE),
    ("basic_stanford_sentiment_treebank.jsonnet", ["seq2vec_encoder"], "iram", SST, SENTENCE),
]


@pytest.mark.parametrize("config, keys, new_type, data, example", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_type_only_swap_trains_and_predicts(config, keys, new_type, data, example, tmp_path):
    published = Params.from_file(str(CONFIGS / config)).as_dict(quiet=True)
    swapped = json.loads(json.dumps(published))
    for key in keys:
        assert swapped["model"][key]["type"] in ("lstm",)
        swapped["model"][key]["type"] = new_type
    changed = {(k, f) for k in swapped["model"] if isinstance(swapped["model"][k], dict)
               for f in swapped["model"][k] if swapped["model"][k][f] != published["model"][k][f]}
    assert changed == {(key, "type") for key in keys}  # nothing but the type
    path = tmp_path / "config.json"
    path.write_text(json.dumps(swapped))
    overrides = {"train_data_path": data, "validation_data_path": data, "test_data_path": data,
                 "trainer.num_epochs": 1}
    train_model_from_file(str(path), str(tmp_path / "run"), overrides=json.dumps(overrides))
    archive = load_archive(str(tmp_path / "run" / "model.tar.gz"))
    # the model's default predictor (bcn has none: text_classifier, which its model card names)
    base = "text_classifier" if config.startswith("biattentive") else None
    prediction = Predictor.from_archive(archive, base).predict_json(example)
    assert "label" in prediction
    if new_type in ("lstmn", "nse"):
        with_internals = Predictor.from_archive(
            archive, "with_encoder_internals", extra_args={"predictor": base} if base else None
        ).predict_json(example)
        assert with_internals["label"] == prediction["label"]
        internals = with_internals["encoder_internals"]
        names = {name.split("#")[0] for name in internals}
        assert names == {f"_{key}" for key in keys}, internals.keys()
        for name, entry in internals.items():
            n = len(entry["tokens"])
            matrix = entry["attention" if new_type == "lstmn" else "keys"]
            if new_type == "lstmn":  # (2 directions x 1 layer, n, n)
                assert len(matrix) == 2 and all(len(row) == n for layer in matrix for row in layer), name
            else:
                assert len(matrix) == n and all(len(row) == n for row in matrix), name
        if config == "esim.jsonnet":  # one encoder, two calls: premise then hypothesis, labelled with their tokens
            assert internals["_encoder#0"]["tokens"] == ["Two", "dogs", "run", "on", "the", "beach", "."]
            assert internals["_encoder#1"]["tokens"] == ["Animals", "are", "outside", "."]
            # and attention-map draws them, though esim's own prediction has no attention
            output = tmp_path / "map.png"
            run_attention_map(Namespace(archive_file=str(tmp_path / "run" / "model.tar.gz"), input=json.dumps(example),
                                        output_file=str(output), key="_encoder#1.keys" if new_type == "nse" else None,
                                        line=1, predictor=None, layer=1, scale="absolute", cuda_device=-1))
            assert output.stat().st_size > 0



@pytest.mark.parametrize("new_type", ["lstmn", "nse"])
def test_type_only_swap_of_the_crf_taggers_bidirectional_two_layer_gru(new_type, tmp_path):
    """allennlp-models' crf_tagger (a 2-layer bidirectional `gru` Seq2Seq encoder, dropout 0) with only the
    encoder's type changed trains, tags, and reports both directions' internals of both layers."""
    published = Params.from_file(str(CONFIGS / "crf_tagger.jsonnet")).as_dict(quiet=True)
    swapped = json.loads(json.dumps(published))
    assert swapped["model"]["encoder"]["type"] == "gru"
    swapped["model"]["encoder"]["type"] = new_type
    path = tmp_path / "config.json"
    path.write_text(json.dumps(swapped))
    train_model_from_file(str(path), str(tmp_path / "run"), overrides=json.dumps({"trainer.num_epochs": 1}))
    archive = load_archive(str(tmp_path / "run" / "model.tar.gz"))
    sentence = {"sentence": "Peter Blackburn said on Thursday ."}
    prediction = Predictor.from_archive(archive, "sentence_tagger").predict_json(sentence)
    assert len(prediction["tags"]) == 6
    internals = Predictor.from_archive(archive, "with_encoder_internals", extra_args={"predictor": "sentence_tagger"}
                                       ).predict_json(sentence)["encoder_internals"]
    entry, = internals.values()
    if new_type == "lstmn":  # 2 directions x 2 layers
        assert len(entry["attention"]) == 4 and len(entry["attention"][0]) == 6
    else:
        assert len(entry["keys"]) == 6


def test_tree_rnn_swaps_into_basic_sst_with_its_two_layer_lstm(tmp_path):
    """The basic SST config's 2-layer `lstm` Seq2Vec encoder: `tree_rnn` takes `num_layers` as `tree_lstm` does."""
    published = Params.from_file(str(CONFIGS / "basic_stanford_sentiment_treebank.jsonnet")).as_dict(quiet=True)
    published["model"]["seq2vec_encoder"]["type"] = "tree_rnn"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(published))
    overrides = {"train_data_path": SST, "validation_data_path": SST, "test_data_path": SST, "trainer.num_epochs": 1}
    train_model_from_file(str(path), str(tmp_path / "run"), overrides=json.dumps(overrides))
    archive = load_archive(str(tmp_path / "run" / "model.tar.gz"))
    assert archive.model._seq2vec_encoder.leaf_lstm.num_layers == 1
    assert "label" in Predictor.from_archive(archive).predict_json(SENTENCE)
