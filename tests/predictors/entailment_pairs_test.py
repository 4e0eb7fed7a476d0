import pytest
from allennlp.common.testing import ModelTestCase
from allennlp.predictors import Predictor

from memplugins.predictors import EntailmentPairsPredictor
from tests.conftest import TEST_FIXTURES


class TestEntailmentPairsPredictor(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(TEST_FIXTURES / "rte_attention.jsonnet", "fixtures/snli/tiny.jsonl", seed=0)
        from allennlp.common import Params
        from allennlp.data import DatasetReader

        reader = DatasetReader.from_params(Params.from_file(TEST_FIXTURES / "rte_attention.jsonnet")["dataset_reader"])
        self.predictor = Predictor.by_name("entailment_pairs")(self.model, reader)

    def test_is_the_models_default_predictor(self):
        assert self.model.default_predictor == "entailment_pairs"
        assert isinstance(self.predictor, EntailmentPairsPredictor)

    @pytest.mark.parametrize(
        "record",
        [
            {"premise": "Two dogs run on the beach.", "hypothesis": "Animals are outside."},
            {"sentence1": "Two dogs run on the beach.", "sentence2": "Animals are outside.", "gold_label": "entailment"},
        ],
    )
    def test_both_input_formats_give_label_and_word_by_word_attention(self, record):
        output = self.predictor.predict_json(record)
        assert output["label"] in {"entailment", "neutral", "contradiction"}
        assert output["premise_tokens"] == ["Two", "dogs", "run", "on", "the", "beach", "."]
        assert output["hypothesis_tokens"] == ["Animals", "are", "outside", "."]
        attention = output["premise_attention"]
        assert len(attention) == 4 and all(len(row) == 7 for row in attention)
        assert all(abs(sum(row) - 1) < 1e-5 for row in attention)
        assert abs(sum(output["label_probs"]) - 1) < 1e-5

    def test_batch_prediction_matches_single(self):
        records = [
            {"premise": "Two dogs run on the beach.", "hypothesis": "Animals are outside."},
            {"premise": "A man sleeps.", "hypothesis": "A person is awake and dancing at a big party."},
        ]
        batch = self.predictor.predict_batch_json(records)
        for record, batched in zip(records, batch):
            single = self.predictor.predict_json(record)
            assert single["label"] == batched["label"]
            for single_row, batched_row in zip(single["premise_attention"], batched["premise_attention"]):
                assert single_row == pytest.approx(batched_row, abs=1e-6)

    def test_missing_keys_are_a_clear_error(self):
        from memplugins.predictors.inputs import InvalidInputError

        with pytest.raises(InvalidInputError, match="needs 'premise' or 'sentence1'; got keys \\['text'\\]"):
            self.predictor.predict_json({"text": "no pair here"})


class TestEntailmentPairsPredictorWithNse(ModelTestCase):
    def test_predictions_carry_labels_and_memory_keys(self):
        from allennlp.common import Params
        from allennlp.data import DatasetReader

        config = TEST_FIXTURES / "nse_pair_classifier.jsonnet"
        self.set_up_model(config, "fixtures/snli/tiny.jsonl", seed=0)
        reader = DatasetReader.from_params(Params.from_file(config)["dataset_reader"])
        predictor = Predictor.by_name(self.model.default_predictor)(self.model, reader)
        output = predictor.predict_json({"premise": "A man sleeps on a bench.", "hypothesis": "A person rests."})
        assert output["label"] in {"entailment", "neutral", "contradiction"}
        n, m = len(output["hypothesis_tokens"]), len(output["premise_tokens"])
        assert (len(output["hypothesis_premise_keys"]), len(output["hypothesis_premise_keys"][0])) == (n, m)
        assert (len(output["premise_keys"]), len(output["premise_keys"][0])) == (m, m)


def test_a_long_premise_predicts_in_bounded_output():
    """
    NSE keys are T x T: a 3,000-token premise would write 9M numbers (200 MB of JSON); by default arrays over
    100,000 numbers are left out. (1,000 tokens here: the NSE pass over 3,000 takes ~100 s, see the README.)
    """
    import json

    from allennlp.common import Params
    from allennlp.data import DatasetReader, Vocabulary
    from allennlp.models import Model

    params = Params.from_file(TEST_FIXTURES / "nse_pair_classifier.jsonnet")
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocab = Vocabulary.from_instances(reader.read("fixtures/snli/tiny.jsonl"))
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    words = [vocab.get_token_from_index(i) for i in range(2, vocab.get_vocab_size())]
    record = {"premise": " ".join(words[i % len(words)] for i in range(1000)), "hypothesis": "A dog runs outside ."}
    output = Predictor.by_name("entailment_pairs")(model, reader).predict_json(record)
    assert output["dropped_internals"] == {"premise_keys": [1000, 1000]}
    assert len(output["hypothesis_premise_keys"]) == 5  # 5 x 1,000: kept
    assert len(json.dumps(output)) < 2_000_000
    shorter = {"premise": " ".join(words[i % len(words)] for i in range(400)), "hypothesis": record["hypothesis"]}
    assert "premise_keys" not in Predictor.by_name("entailment_pairs")(model, reader).predict_json(shorter)
    everything = Predictor.by_name("entailment_pairs")(model, reader, max_internal_entries=10**6).predict_json(shorter)
    assert "dropped_internals" not in everything and len(everything["premise_keys"]) == 400
