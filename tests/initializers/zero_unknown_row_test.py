import json
import tarfile

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.models.archival import archive_model, load_archive
from allennlp.nn.initializers import Initializer

from memplugins.initializers.zero_unknown_row import TOKEN_TABLE, TOKEN_TABLE_REGEX, zero_unknown_row_in_archive
from tests.config_models import build_config_model

WITHOUT = json.dumps({"model.initializer": {"regexes": []}})
TUNED_PEER = "benchmarks/replication/configs/sst2_basic_classifier_lstm.jsonnet"
TUNED_PEER_TABLE = json.dumps({"model.text_field_embedder.token_embedders.tokens.trainable": True})


def test_only_the_unknown_row_is_zeroed():
    table = torch.randn(6, 4)
    before = table.clone()
    Initializer.from_params(Params({"type": "zero_unknown_row"}))(table, parameter_name="t")
    assert torch.all(table[1] == 0)
    torch.testing.assert_close(table[[0, 2, 3, 4, 5]], before[[0, 2, 3, 4, 5]], rtol=0, atol=0)


def test_a_parameter_that_is_not_a_table_is_refused_by_name():
    with pytest.raises(ConfigurationError, match="bias.*embedding table"):
        Initializer.from_params(Params({"type": "zero_unknown_row"}))(torch.zeros(5), parameter_name="bias")


def _trained(config: str, overrides: str, optimizer, steps: int = 3):
    built = build_config_model(config, num_instances=8, overrides=overrides, seed=3)
    model = built.model
    model.train()
    parameters = [p for p in model.parameters() if p.requires_grad]
    step = optimizer(parameters)
    torch.manual_seed(5)  # dropout draws
    for _ in range(steps):
        step.zero_grad()
        model(**built.batch())["loss"].backward()
        torch.nn.utils.clip_grad_norm_(parameters, 1.0)
        step.step()
    return built, dict(model.named_parameters())


@pytest.mark.parametrize(
    "config, overrides, optimizer",
    [
        # the tree LSTM's AdaGrad with an L2 on its tuned table
        ("training_config/sst2_tree_lstm.jsonnet", "",
         lambda p: torch.optim.Adagrad(p, lr=0.05, weight_decay=1e-4)),
        # the peer with a tuned table, Adam with an L2
        (TUNED_PEER, TUNED_PEER_TABLE, lambda p: torch.optim.Adam(p, lr=1e-3, weight_decay=1e-4)),
    ],
)
def test_training_is_unchanged_but_for_the_unknown_row(config, overrides, optimizer):
    def merged(extra: str) -> str:
        return json.dumps({**json.loads(overrides or "{}"), **json.loads(extra or "{}")})

    built, zeroed = _trained(config, merged(""), optimizer)
    _, random_row = _trained(config, merged(WITHOUT), optimizer)
    assert built.vocab.get_token_index("@@UNKNOWN@@", "tokens") == 1
    table = zeroed[TOKEN_TABLE]
    assert table.requires_grad  # the table was tuned: its used rows moved
    assert torch.all(table[1] == 0)
    assert random_row[TOKEN_TABLE][1].abs().sum() > 0
    assert zeroed.keys() == random_row.keys()
    for name, value in zeroed.items():
        other = random_row[name]
        if name == TOKEN_TABLE:
            value, other = torch.cat([value[:1], value[2:]]), torch.cat([other[:1], other[2:]])
        torch.testing.assert_close(value, other, rtol=0, atol=0, msg=name)


def _archive(tmp_path, overrides: str = WITHOUT):
    """An archive of the NSE SST config's model, built (untrained) without the initializer."""
    built = build_config_model("training_config/sst2_nse.jsonnet", num_instances=8, overrides=overrides)
    serialization = tmp_path / "run"
    serialization.mkdir()
    params = Params.from_file("training_config/sst2_nse.jsonnet", overrides)
    (serialization / "config.json").write_text(json.dumps(params.as_dict(quiet=True)))
    built.vocab.save_to_files(str(serialization / "vocabulary"))
    torch.save(built.model.state_dict(), serialization / "best.th")
    archive_model(str(serialization))
    return built, str(serialization / "model.tar.gz")


def test_an_archive_trained_without_it_gets_the_row_zeroed_and_the_initializer(tmp_path):
    built, archive = _archive(tmp_path)
    assert built.model._text_field_embedder.token_embedder_tokens.weight[1].abs().sum() > 0
    output = str(tmp_path / "zeroed.tar.gz")
    zero_unknown_row_in_archive(archive, output)
    loaded = load_archive(output)
    before = built.model.state_dict()
    after = loaded.model.state_dict()
    assert before.keys() == after.keys()
    for name, value in before.items():
        if name == TOKEN_TABLE:
            assert torch.all(after[name][1] == 0)
            value, after[name] = torch.cat([value[:1], value[2:]]), torch.cat([after[name][:1], after[name][2:]])
        torch.testing.assert_close(after[name], value, rtol=0, atol=0, msg=name)
    regexes = loaded.config.as_dict(quiet=True)["model"]["initializer"]["regexes"]
    assert regexes[0] == [TOKEN_TABLE_REGEX, {"type": "zero_unknown_row"}]
    # again: the regex is not added twice
    twice = str(tmp_path / "twice.tar.gz")
    zero_unknown_row_in_archive(output, twice)
    assert load_archive(twice).config.as_dict(quiet=True)["model"]["initializer"]["regexes"] == regexes


def test_an_archive_whose_unknown_row_is_elsewhere_is_refused(tmp_path):
    _, archive = _archive(tmp_path)
    tampered = tmp_path / "tampered.tar.gz"
    extracted = tmp_path / "extracted"
    with tarfile.open(archive) as source:
        source.extractall(extracted, filter="data")
    tokens = extracted / "vocabulary" / "tokens.txt"
    lines = tokens.read_text().splitlines()
    tokens.write_text("\n".join([lines[1], lines[0]] + lines[2:]) + "\n")
    with tarfile.open(tampered, "w:gz") as target:
        for path in sorted(extracted.iterdir()):
            target.add(path, arcname=path.name)
    with pytest.raises(ConfigurationError, match="tampered.tar.gz.*not @@UNKNOWN@@"):
        zero_unknown_row_in_archive(str(tampered), str(tmp_path / "out.tar.gz"))
