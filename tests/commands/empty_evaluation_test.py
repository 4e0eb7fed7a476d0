"""memplugins.commands.empty_evaluation: evaluating on data that yields no instance is an error, for any reader."""
import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.data.data_loaders import MultiProcessDataLoader
from allennlp.evaluation.evaluator import SimpleEvaluator
from allennlp.models.archival import load_archive
from allennlp_models.pair_classification.dataset_readers.snli import SnliReader

from memplugins.readers.errors import MalformedInputError
from memplugins.tokenizers import SpacyBlankTokenizer
from tests.conftest import TEST_FIXTURES


def test_no_instances_is_an_error_before_any_metric_is_written(tmp_path):
    train_model_from_file(str(TEST_FIXTURES / "rte_attention.jsonnet"), str(tmp_path / "run"),
                          overrides='{"trainer.num_epochs": 1}')
    model = load_archive(str(tmp_path / "run" / "model.tar.gz")).model
    only_unlabelled = tmp_path / "dash.jsonl"  # allennlp-models' snli reader skips '-' labels silently
    only_unlabelled.write_text('{"gold_label": "-", "sentence1": "A man.", "sentence2": "A person."}\n' * 3)
    loader = MultiProcessDataLoader(SnliReader(tokenizer=SpacyBlankTokenizer()), str(only_unlabelled), batch_size=2)
    loader.index_with(model.vocab)
    metrics_file = tmp_path / "metrics.json"
    with pytest.raises(MalformedInputError, match="dash.jsonl:0: no instances to evaluate"):
        SimpleEvaluator(cuda_device=-1)(model, loader, metrics_output_file=str(metrics_file))
    assert not metrics_file.exists()
