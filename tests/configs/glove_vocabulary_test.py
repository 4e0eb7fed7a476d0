"""
Every config with GloVe vectors puts GLOVE_PATH's words into its vocabulary (training_config/glove_vocabulary.libsonnet),
so that a dev, test or user word the training data lacks keeps its GloVe row instead of the random, never-trained
@@UNKNOWN@@ row (docs/research/sst.md, "SST test words"), and zeroes that row (training_config/zero_unknown_row.libsonnet)
for the words GloVe lacks too.
"""
import gzip
from typing import Dict, Iterator, List

import pytest
import torch
from allennlp.common import Params

from memplugins.initializers.zero_unknown_row import TOKEN_TABLE_REGEX
from tests.config_models import REPO_ROOT, build_config_model

CONFIG_FILES = sorted(
    str(path.relative_to(REPO_ROOT))
    for folder in ("training_config", "benchmarks/replication/configs")
    for path in (REPO_ROOT / folder).glob("*.jsonnet")
)


def token_pretrained_files(tree) -> Iterator[str]:
    """The `pretrained_file` of every embedder of the `tokens` namespace in a config."""
    if isinstance(tree, dict):
        if "pretrained_file" in tree and tree.get("vocab_namespace", "tokens") == "tokens":
            yield tree["pretrained_file"]
        for value in tree.values():
            yield from token_pretrained_files(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from token_pretrained_files(value)


def glove_rows(path: str) -> Dict[str, List[float]]:
    """A GloVe file's rows by word, in the file's order."""
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return {word: [float(x) for x in rest.split()] for word, rest in (line.rstrip("\n").split(" ", 1) for line in lines)}


SST2_NSE = "training_config/sst2_nse.jsonnet"


def vocabulary_glove_path(name: str) -> str:
    return Params.from_file(str(REPO_ROOT / name)).as_dict(quiet=True)["vocabulary"]["pretrained_files"]["tokens"]


GLOVE_CONFIGS = [
    name for name in CONFIG_FILES
    if list(token_pretrained_files(Params.from_file(str(REPO_ROOT / name)).as_dict(quiet=True)["model"]))
]


def test_the_glove_configs_are_found():
    assert "training_config/sst2_nse.jsonnet" in GLOVE_CONFIGS
    assert "benchmarks/replication/configs/sst_bcn.jsonnet" in GLOVE_CONFIGS
    assert len(GLOVE_CONFIGS) >= 25


@pytest.mark.parametrize("name", GLOVE_CONFIGS)
def test_every_glove_config_adds_the_glove_words_to_its_vocabulary(name):
    config = Params.from_file(str(REPO_ROOT / name)).as_dict(quiet=True)
    vocabulary = config.get("vocabulary", {})
    files = set(token_pretrained_files(config["model"]))
    assert vocabulary.get("pretrained_files", {}).get("tokens") in files, name
    assert vocabulary["min_pretrained_embeddings"]["tokens"] == 100000, name


@pytest.mark.parametrize("name", GLOVE_CONFIGS)
def test_every_glove_config_zeroes_its_unknown_row(name):
    config = Params.from_file(str(REPO_ROOT / name)).as_dict(quiet=True)
    regexes = config["model"]["initializer"]["regexes"]
    # first: AllenNLP applies the first regex that matches a parameter
    assert regexes[0] == [TOKEN_TABLE_REGEX, {"type": "zero_unknown_row"}], name


def test_a_word_only_glove_knows_keeps_its_glove_row():
    built = build_config_model(SST2_NSE, num_instances=8)
    seen = {token.text.lower() for instance in built.instances for token in instance["tokens"].tokens}
    rows = glove_rows(vocabulary_glove_path(SST2_NSE))
    unseen = [word for word in rows if word not in seen][:50]
    assert len(unseen) == 50
    unknown = built.vocab.get_token_index("@@UNKNOWN@@", "tokens")
    weight = built.model._text_field_embedder.token_embedder_tokens.weight
    for word in unseen:
        index = built.vocab.get_token_index(word, "tokens")
        assert index != unknown, word
        assert torch.allclose(weight[index], torch.tensor(rows[word]), atol=1e-6), word
    assert built.vocab.get_token_index("qwxzv-not-a-word", "tokens") == unknown == 1
    assert torch.all(weight[unknown] == 0)  # a word GloVe lacks too meets a zero row, not a random one


def test_glove_vocabulary_limits_the_glove_words_to_the_first_n(monkeypatch):
    monkeypatch.setenv("GLOVE_VOCABULARY", "10")
    built = build_config_model(SST2_NSE, num_instances=8)
    seen = {token.text.lower() for instance in built.instances for token in instance["tokens"].tokens}
    words = list(glove_rows(vocabulary_glove_path(SST2_NSE)))
    vocabulary = set(built.vocab.get_token_to_index_vocabulary("tokens"))
    assert set(words[:10]) <= vocabulary
    assert vocabulary - {"@@PADDING@@", "@@UNKNOWN@@"} == seen | set(words[:10])
