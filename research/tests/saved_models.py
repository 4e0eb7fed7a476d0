"""A small model saved as a serialization directory (config.json, best.th, vocabulary/), with random weights large
enough that attention and memory keys are far from uniform: the input of the analyses in benchmarks/ that load
a trained model (lstmn_attention_use.py, nse_memory_use.py, sst_composition.py, sst_accuracy_by_length.py)."""
import json
from pathlib import Path

import _jsonnet
import torch
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model

from tests.conftest import REPO_ROOT


def save_with_random_weights(tmp_path, config: dict, data_file: str, reader_key: str = "dataset_reader",
                             seed: int = 0):
    """Builds `config`'s model on the vocabulary of `data_file` (read by `config[reader_key]`), draws its weights
    from N(0, 0.6^2) with `seed` and saves it into `tmp_path`; returns the model and the instances."""
    reader = DatasetReader.from_params(Params(json.loads(json.dumps(config[reader_key]))))
    instances = list(reader.read(data_file))
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(seed)
    model = Model.from_params(vocab=vocab, params=Params(json.loads(json.dumps(config["model"])))).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0, 0.6)
    Params(config).to_file(str(tmp_path / "config.json"))
    torch.save(model.state_dict(), tmp_path / "best.th")
    vocab.save_to_files(str(tmp_path / "vocabulary"))
    return model, instances


def shrunk_decomposable_attention_config() -> dict:
    """replicate.py's snli_decomposable_attention_lstmn_encoder, shrunk: allennlp-models' decomposable_attention
    with an `lstmn` premise_encoder (8 wide) that encodes the hypothesis too."""
    from memplugins.compat import CONFIG_DEFAULTS

    config = json.loads(_jsonnet.evaluate_file(
        str(REPO_ROOT / "benchmarks" / "replication" / "configs" / "snli_decomposable_attention.jsonnet"), ext_vars=CONFIG_DEFAULTS))
    model = config["model"]
    model["text_field_embedder"]["token_embedders"]["tokens"]["projection_dim"] = 8
    model["premise_encoder"] = {"type": "lstmn", "input_size": 8, "hidden_size": 8}
    model["attend_feedforward"].update(input_dim=8, hidden_dims=8)
    model["compare_feedforward"].update(input_dim=16, hidden_dims=8)
    model["aggregate_feedforward"].update(input_dim=16, hidden_dims=[8, 3])
    return config


SNLI_SAMPLE = "fixtures/snli/snli_1.0_dev_sample_validation.jsonl"  # under the repository's root


def save_shrunk_pair_model(folder, seed: int = 0, encoder: bool = True):
    """`shrunk_decomposable_attention_config()`'s model (without its `lstmn` when not `encoder`) on the vocabulary of
    the SNLI sample, its weights drawn with `seed`, saved into `folder` (made if missing); the model and the
    sample's instances."""
    folder.mkdir(parents=True, exist_ok=True)
    config = shrunk_decomposable_attention_config()
    if not encoder:
        del config["model"]["premise_encoder"]
    return save_with_random_weights(folder, config, str(REPO_ROOT / SNLI_SAMPLE), seed=seed)


SST_SAMPLE = REPO_ROOT / "fixtures" / "sst" / "dev_sample.txt"


def _shrunk_sst_config(config_file: Path, ext_vars: dict) -> dict:
    """CONFIG_FILE evaluated with EXT_VARS, its word vectors 6 wide and drawn (no GloVe file, no fixed vocabulary)."""
    config = json.loads(_jsonnet.evaluate_file(str(config_file), ext_vars=ext_vars))
    embedder = config["model"]["text_field_embedder"]["token_embedders"]["tokens"]
    embedder.pop("pretrained_file")
    embedder["embedding_dim"] = 6
    config.pop("vocabulary")
    return config


def save_shrunk_sst_peer(folder, granularity: str = "2-class", seed: int = 0):
    """The allennlp-models SST peer (benchmarks/replication/configs/sst_basic_classifier_lstm.jsonnet: `basic_classifier`, an
    `lstm` Seq2Vec encoder), shrunk to an LSTM of 8, with random weights on the SST sample's vocabulary, saved into
    FOLDER (its weights drawn with SEED); the model and the sample's instances. Load the plugins first
    (sst_accuracy_by_length.import_plugins)."""
    from memplugins.compat import CONFIG_DEFAULTS

    config = _shrunk_sst_config(REPO_ROOT / "benchmarks" / "replication" / "configs" / "sst_basic_classifier_lstm.jsonnet",
                                {**CONFIG_DEFAULTS, "SST_GRANULARITY": granularity})
    config["model"]["seq2vec_encoder"].update(input_size=6, hidden_size=8)
    return save_with_random_weights(folder, config, str(SST_SAMPLE), seed=seed)


def save_shrunk_tree_lstm(folder, granularity: str = "2", seed: int = 0):
    """training_config/sst{GRANULARITY}_tree_lstm.jsonnet's `tree_classifier`, its nodes 8 wide, with random weights
    on the SST sample's vocabulary, saved into FOLDER (its weights drawn with SEED); the model and the sample's
    instances."""
    from memplugins.compat import CONFIG_DEFAULTS

    config = _shrunk_sst_config(REPO_ROOT / "training_config" / f"sst{granularity}_tree_lstm.jsonnet", CONFIG_DEFAULTS)
    config["model"]["encoder"].update(input_dim=6, hidden_dim=8)
    return save_with_random_weights(folder, config, str(SST_SAMPLE), seed=seed)
