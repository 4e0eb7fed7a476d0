"""
Every row of `benchmarks/replication/rows/` builds: its config with the row's variables and `-o` overrides gives
a dataset reader, a model and an optimizer, on the configs' shipped fixtures in place of the row's data. A row that
would fail only when a worker (or a lent GPU's few minutes) starts it, e.g. a misspelt constructor argument in an
override, fails here.
"""
import importlib
import json
import re
import sys
from dataclasses import replace
from typing import List

import pytest
import torch
from allennlp.common import Params
from allennlp.data import DatasetReader
from allennlp.nn.util import get_text_field_mask
from allennlp.training.optimizers import Optimizer

from tests.conftest import REPO_ROOT
from tests.config_models import build_config_model

sys.path.insert(0, str(REPO_ROOT / "benchmarks" / "replication"))
sys.path.insert(0, str(REPO_ROOT / "research"))  # the instruments some rows train
from rows import FAMILIES, INSTRUMENTS, Row  # noqa: E402

for _instrument in INSTRUMENTS:  # as replicate.py's commands `--include-package` them
    importlib.import_module(_instrument)

ROWS: List[Row] = [row for rows in FAMILIES.values() for row in rows]


def _non_data_variables(row: Row) -> dict:
    """The row's variables but its data paths, which stay at the configs' shipped fixtures."""
    return {name: value for name, value in row.variables.items() if not value.startswith(("DATA/", "SLICE/"))}


def _set_variables(row: Row, monkeypatch) -> None:
    for name, value in _non_data_variables(row).items():
        monkeypatch.setenv(name, value)


def _settings(row: Row) -> str:
    """What of a row reaches its model: the config, the variables that are not data paths, the overrides."""
    variables = {name: value for name, value in _non_data_variables(row).items()
                 if name not in ("NUM_EPOCHS", "CUDA_DEVICE")}
    return json.dumps([row.config, variables, row.overrides], sort_keys=True, default=str)


# rows that differ only in data, epochs or seeds build the same model once; the default run builds each family's
# first row, `-m every_row` all of them
CASES = {}
for _row in ROWS:
    CASES.setdefault(_settings(_row), _row)
FIRST_OF_FAMILY = {row.family: row.name for row in reversed(list(CASES.values()))}


def _case(row: Row):
    marks = [] if FIRST_OF_FAMILY[row.family] == row.name else [pytest.mark.every_row]
    return pytest.param(row, id=row.name, marks=marks)


def test_row_names_are_unique():
    names = [row.name for row in ROWS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("row", [_case(row) for row in CASES.values()])
def test_every_row_builds_its_reader_model_and_optimizer(row: Row, monkeypatch):
    _set_variables(row, monkeypatch)
    overrides = json.dumps(row.overrides)
    # enough of each fixture for every label to be seen (a model checks its output size against the labels)
    built = build_config_model(row.config, num_instances=5000, overrides=overrides)
    params = Params.from_file(str(REPO_ROOT / row.config), overrides)
    if "validation_dataset_reader" in params:
        DatasetReader.from_params(params.pop("validation_dataset_reader"))
    trainer = params.pop("trainer")
    parameters = [[name, parameter] for name, parameter in built.model.named_parameters() if parameter.requires_grad]
    Optimizer.from_params(model_parameters=parameters, params=trainer.pop("optimizer"))
    first = built._replace(instances=built.instances[:4])
    assert first.model(**first.batch())["loss"].isfinite()


def test_a_misspelt_override_fails_to_build(monkeypatch):
    row = _row("ptb_lstmn_3layers_skip")
    _set_variables(row, monkeypatch)
    with pytest.raises(Exception, match="skip_conections"):
        build_config_model(row.config, num_instances=4,
                           overrides=json.dumps({"model.contextualizer.skip_conections": True}))


def _row(name: str) -> Row:
    return next(row for row in ROWS if row.name == name)


def _built_row(name: str, monkeypatch):
    row = _row(name)
    _set_variables(row, monkeypatch)
    return row, build_config_model(row.config, num_instances=5000, overrides=json.dumps(row.overrides))


def _encoder_parameters(model) -> dict:
    return {name.removeprefix("_premise_encoder."): parameter for name, parameter in model.named_parameters()
            if name.startswith("_premise_encoder.")}


@pytest.mark.every_row
def test_the_lstm_encoder_row_started_as_our_lstmn_has_its_initialisation(monkeypatch):
    # an initializer regex that matches no parameter is silently unused: check what each one reached
    _, built = _built_row("snli_decomposable_attention_lstm_encoder_lstmn_init", monkeypatch)
    lstm = _encoder_parameters(built.model)
    _, reference = _built_row("snli_decomposable_attention_lstmn_encoder", monkeypatch)
    lstmn = _encoder_parameters(reference.model)
    for weight in ("weight_ih", "weight_hh"):
        xavier = (6 / sum(lstm[f"_module.{weight}_l0"].shape)) ** 0.5
        assert lstm[f"_module.{weight}_l0"].abs().max() <= xavier
        assert lstm[f"_module.{weight}_l0"].abs().max() > 1.05 / 200 ** 0.5  # past torch's bound, 1 / sqrt(200)
        assert lstm[f"_module.{weight}_l0"].std().item() == pytest.approx(lstmn[f"layers.0.{weight}"].std().item(), rel=0.02)
    assert (lstm["_module.bias_ih_l0"] == 0).all()
    assert torch.equal(lstm["_module.bias_hh_l0"], lstmn["layers.0.bias_hh"])  # zero but the forget gate's 1
    assert (lstm["_module.bias_hh_l0"][200:400] == 1).all() and lstm["_module.bias_hh_l0"].sum() == 200


@pytest.mark.every_row
def test_the_lstmn_encoder_row_started_as_torch_lstm_has_its_initialisation(monkeypatch):
    _, built = _built_row("snli_decomposable_attention_lstmn_encoder_lstm_init", monkeypatch)
    lstmn = _encoder_parameters(built.model)
    _, reference = _built_row("snli_decomposable_attention_lstm_encoder", monkeypatch)
    lstm = _encoder_parameters(reference.model)
    bound = 1 / 200 ** 0.5
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        assert lstmn[f"layers.0.{name}"].abs().max() <= bound
        assert lstmn[f"layers.0.{name}"].abs().max() > 0.99 * bound
        assert lstmn[f"layers.0.{name}"].std().item() == pytest.approx(lstm[f"_module.{name}_l0"].std().item(), rel=0.05)
    # eq. 4's weights keep the LSTMN's own Xavier start
    _, default = _built_row("snli_decomposable_attention_lstmn_encoder", monkeypatch)
    for name in ("tape_key", "input_query", "summary_query", "scorer"):
        assert torch.equal(lstmn[f"layers.0.{name}.weight"], _encoder_parameters(default.model)[f"layers.0.{name}.weight"])


@pytest.mark.every_row
def test_the_authors_eq4_row_holds_w_h_tilde_at_zero_through_adam_steps(monkeypatch):
    row, built = _built_row("snli_decomposable_attention_lstmn_encoder_authors_eq4", monkeypatch)
    params = Params.from_file(str(REPO_ROOT / row.config), json.dumps(row.overrides))
    parameters = [[name, parameter] for name, parameter in built.model.named_parameters() if parameter.requires_grad]
    optimizer = Optimizer.from_params(model_parameters=parameters, params=params.pop("trainer").pop("optimizer"))
    encoder = _encoder_parameters(built.model)
    frozen, trained = encoder["layers.0.summary_query.weight"], encoder["layers.0.tape_key.weight"]
    assert (frozen == 0).all() and frozen.requires_grad
    before = trained.detach().clone()
    first = built._replace(instances=built.instances[:8])
    for _ in range(3):
        optimizer.zero_grad()
        built.model(**first.batch())["loss"].backward()
        assert frozen.grad.abs().sum() > 0  # it would learn: only its learning rate of 0 keeps it at zero
        optimizer.step()
    assert (frozen == 0).all()
    assert not torch.equal(trained, before)


@pytest.mark.every_row
def test_the_lstmn_encoder_row_with_a_zero_forget_bias_keeps_the_lstmns_weights(monkeypatch):
    _, built = _built_row("snli_decomposable_attention_lstmn_encoder_zero_forget_bias", monkeypatch)
    _, default = _built_row("snli_decomposable_attention_lstmn_encoder", monkeypatch)
    zero, own = _encoder_parameters(built.model), _encoder_parameters(default.model)
    assert (own["layers.0.bias_hh"][200:400] == 1).all()  # what the row changes
    assert (zero["layers.0.bias_hh"] == 0).all() and (zero["layers.0.bias_ih"] == 0).all()
    for name in own:
        if "bias" not in name:
            assert torch.equal(zero[name], own[name]), name


@pytest.mark.every_row
def test_the_lstm_encoder_row_with_a_forget_bias_of_1_keeps_torchs_weights(monkeypatch):
    _, built = _built_row("snli_decomposable_attention_lstm_encoder_forget_bias_1", monkeypatch)
    _, default = _built_row("snli_decomposable_attention_lstm_encoder", monkeypatch)
    raised, own = _encoder_parameters(built.model), _encoder_parameters(default.model)
    assert (raised["_module.bias_hh_l0"][200:400] == 1).all() and raised["_module.bias_hh_l0"].sum() == 200
    for name in ("_module.weight_ih_l0", "_module.weight_hh_l0", "_module.bias_ih_l0"):
        assert torch.equal(raised[name], own[name]), name
    assert own["_module.bias_ih_l0"].abs().max() > 0.9 / 200 ** 0.5  # torch's uniform start, not zero


@pytest.mark.every_row
def test_the_lstmn_model_row_with_a_zero_forget_bias_reaches_both_its_lstmns(monkeypatch):
    _, built = _built_row("snli_lstmn_deep_fusion_zero_forget_bias", monkeypatch)
    _, default = _built_row("snli_lstmn_deep_fusion", monkeypatch)
    zero, own = dict(built.model.named_parameters()), dict(default.model.named_parameters())
    for layer in ("_encoder", "_decoder"):
        assert (own[f"{layer}.bias_hh"][100:200] == 1).all()  # what the row changes
        assert (zero[f"{layer}.bias_hh"] == 0).all() and (zero[f"{layer}.bias_ih"] == 0).all()
    changed = [name for name in own if not torch.equal(zero[name], own[name])]
    assert sorted(changed) == ["_decoder.bias_hh", "_encoder.bias_hh"]  # the unknown row stays zero, the rest as is


@pytest.mark.every_row
def test_the_esim_row_with_lstmns_has_esims_start_in_all_four_of_them(monkeypatch):
    # ESIM's initializer regexes name LSTM parameters; the row relies on them reaching every LSTMN's eq. 7 weights
    _, built = _built_row("snli_esim_lstmn_encoders", monkeypatch)
    parameters = dict(built.model.named_parameters())
    for encoder, width in (("_encoder", 50), ("_inference_encoder", 300)):
        for direction in ("", "backward_encoder."):
            prefix = f"{encoder}.{direction}layers.0."
            weight_ih, weight_hh = parameters[prefix + "weight_ih"], parameters[prefix + "weight_hh"]
            assert weight_ih.shape == (1200, width)
            assert weight_ih.abs().max() <= (6 / (1200 + width)) ** 0.5
            assert weight_ih.std().item() == pytest.approx((2 / (1200 + width)) ** 0.5, rel=0.05)
            # orthogonal: the (1200, 300) matrix's columns orthonormal, unlike the LSTMN's own Xavier start
            assert torch.allclose(weight_hh.T @ weight_hh, torch.eye(300), atol=1e-4)
            assert (parameters[prefix + "bias_ih"] == 0).all()
            bias = parameters[prefix + "bias_hh"]
            assert (bias[300:600] == 1).all() and bias.sum() == 300  # lstm_hidden_bias: the forget gate's 1
    assert built.model._encoder.get_output_dim() == 600 and built.model._inference_encoder.is_bidirectional()


def test_a_row_that_trains_an_instrument_includes_its_module_in_train_and_evaluate():
    from replicate import include_packages

    row = _row("snli_decomposable_attention_lstmn_encoder_word_alignment")
    assert include_packages(row) == ["--include-package", "memplugins",
                                     "--include-package", "word_aligned_decomposable_attention"]
    assert row.overrides["model.type"] == "decomposable_attention_aligned_on_words"
    assert include_packages(replace(row, packages=[])) == ["--include-package", "memplugins"]
    with pytest.raises(ValueError, match=r"packages \['os'\] are not among rows.INSTRUMENTS"):
        include_packages(replace(row, packages=["os"]))


@pytest.mark.parametrize("encoder", ["lstm", "lstmn"])
@pytest.mark.parametrize("alignment_input", ["normalised_words_and_states", "position_erased_states",
                                             "principal_direction_erased_states",
                                             "position_free_principal_direction_erased_states"])
@pytest.mark.every_row
def test_the_evened_and_position_erased_rows_keep_their_rows_encoder(encoder, alignment_input, monkeypatch):
    row, built = _built_row(f"snli_decomposable_attention_{encoder}_encoder_{alignment_input}_alignment", monkeypatch)
    _, reference = _built_row(f"snli_decomposable_attention_{encoder}_encoder", monkeypatch)
    assert built.model._alignment_input == alignment_input
    assert row.packages == ["word_aligned_decomposable_attention"]
    assert ({name: parameter.shape for name, parameter in _encoder_parameters(built.model).items()}
            == {name: parameter.shape for name, parameter in _encoder_parameters(reference.model).items()})
    added = sum(p.numel() for p in built.model.parameters()) - sum(p.numel() for p in reference.model.parameters())
    if alignment_input == "normalised_words_and_states":
        assert [parameter.shape for parameter in built.model._evened_sum.parameters()] == [(200,)] * 4
        assert added == 800
    else:  # no parameter added: the erasure's one statistic is a buffer
        assert added == 0
        assert {name: buffer.shape for name, buffer in built.model.erasure().named_buffers()} == {
            "position_erased_states": {"estimated": (), "covariance": (200,)},
            "principal_direction_erased_states": {"estimated": (), "covariance_matrix": (200, 200)},
            "position_free_principal_direction_erased_states": {"estimated": (), "covariance": (200,),
                                                                "covariance_matrix": (200, 200)}}[alignment_input]


@pytest.mark.parametrize("encoder", ["bilstm", "bilstmn"])
@pytest.mark.every_row
def test_the_bidirectional_word_aligned_rows_keep_their_rows_encoder_and_align_the_word_vectors(encoder, monkeypatch):
    row, built = _built_row(f"snli_decomposable_attention_{encoder}_encoder_word_alignment", monkeypatch)
    _, reference = _built_row(f"snli_decomposable_attention_{encoder}_encoder", monkeypatch)
    assert type(built.model).__name__ == "WordAlignedDecomposableAttention"
    assert row.packages == ["word_aligned_decomposable_attention"]
    for model in (built.model, reference.model):
        assert model._premise_encoder.is_bidirectional() and model._premise_encoder.get_output_dim() == 200
    # the same encoder, parameter for parameter in shape, as the row that aligns the encoded words
    assert ({name: parameter.shape for name, parameter in _encoder_parameters(built.model).items()}
            == {name: parameter.shape for name, parameter in _encoder_parameters(reference.model).items()})


@pytest.mark.parametrize("name, peer, tuned", [
    ("sst2_lstmn_50_in_peer_settings", "sst2_basic_lstm_50_tuned_embeddings", True),
    ("sst5_lstmn_50_in_peer_settings", "sst5_basic_lstm_50_tuned_embeddings", True),
    ("sst2_lstmn_50_in_peer_settings_fixed_embeddings", "sst2_basic_lstm_50", False),
    ("sst2_lstmn_50_in_peer_settings_sentences", "sst2_basic_lstm_50_tuned_embeddings_sentences", True)])
@pytest.mark.every_row
def test_the_lstmn_in_the_peers_settings_differs_from_the_peer_in_its_encoder_alone(name, peer, tuned, monkeypatch):
    row, built = _built_row(name, monkeypatch)
    peer_row = _row(peer)
    assert row.config == peer_row.config and row.variables == peer_row.variables

    def settings(of: Row) -> dict:
        params = Params.from_file(str(REPO_ROOT / of.config), json.dumps(of.overrides)).as_dict()
        for encoder in ("seq2seq_encoder", "seq2vec_encoder"):
            params["model"].pop(encoder, None)
        return params

    # reader, vocabulary, embedder (fine-tuned), classifier, batches, optimizer, patience: the peer's
    assert settings(row) == settings(peer_row)
    assert built.model._text_field_embedder.token_embedder_tokens.weight.requires_grad == tuned
    # the peer's Seq2Vec LSTM returns each sequence's last state; the row reads the LSTMN's there, not at a pad
    built.model.eval()
    by_length = {len(instance["tokens"]): instance for instance in built.instances[:500]}
    lengths = sorted(by_length)
    ragged = [by_length[lengths[0]], by_length[lengths[len(lengths) // 2]], by_length[lengths[-1]]]
    assert len({len(instance["tokens"]) for instance in ragged}) == 3
    together = built._replace(instances=ragged)
    with torch.no_grad():
        tokens = together.batch()["tokens"]
        mask = get_text_field_mask(tokens)
        encoded = built.model._seq2seq_encoder(built.model._text_field_embedder(tokens), mask)
        pooled = built.model._seq2vec_encoder(encoded, mask)
        lengths = mask.sum(1)
        assert torch.equal(pooled, encoded[torch.arange(3), lengths - 1])
        probs = built.model(**together.batch())["probs"]
        for i, instance in enumerate(ragged):
            alone = built.model(**built._replace(instances=[instance]).batch())["probs"]
            torch.testing.assert_close(probs[i:i + 1], alone, atol=1e-6, rtol=1e-5)


def _sst_encoder_parameters(model, encoder: str) -> dict:
    return {name.removeprefix(f"_{encoder}."): parameter for name, parameter in model.named_parameters()
            if name.startswith(f"_{encoder}.")}


def _without_initializer(row: Row) -> dict:
    params = Params.from_file(str(REPO_ROOT / row.config), json.dumps(row.overrides)).as_dict()
    params["model"].pop("initializer")
    return params


def _unknown_row_is_zero(model) -> bool:
    table = model._text_field_embedder.token_embedder_tokens.weight
    return bool((table[model.vocab.get_token_index("@@UNKNOWN@@")] == 0).all())


def _started_as_the_other(name: str, base: str, other: str, monkeypatch) -> tuple:
    """The encoder parameters of row NAME, of the row BASE it changes only in its initializer, and of the row OTHER
    whose encoder's start it takes (an LSTM row's `seq2vec_encoder`, an LSTMN row's `seq2seq_encoder`), and NAME's
    model."""
    row, built = _built_row(name, monkeypatch)
    base_row, base_built = _built_row(base, monkeypatch)
    assert _without_initializer(row) == _without_initializer(base_row)
    models = (built.model, base_built.model, _built_row(other, monkeypatch)[1].model)
    encoders = [_sst_encoder_parameters(model, "seq2seq_encoder" if model._seq2seq_encoder else "seq2vec_encoder")
                for model in models]
    return (*encoders, built.model)


@pytest.mark.every_row
def test_the_peers_lstm_of_50_started_as_our_lstmn_has_its_start_in_both_layers(monkeypatch):
    # an initializer regex that matches no parameter is silently unused: check what each one reached
    lstm, base, lstmn, model = _started_as_the_other("sst2_basic_lstm_50_tuned_embeddings_lstmn_init",
                                                     "sst2_basic_lstm_50_tuned_embeddings",
                                                     "sst2_lstmn_50_in_peer_settings", monkeypatch)
    torch_bound = 1 / 50 ** 0.5
    for layer in (0, 1):
        for weight in ("weight_ih", "weight_hh"):
            started, own = lstm[f"_module.{weight}_l{layer}"], lstmn[f"layers.{layer}.{weight}"]
            assert started.shape == own.shape
            assert started.abs().max() <= (6 / sum(started.shape)) ** 0.5  # Xavier's bound, 0.155
            assert started.abs().max() > 1.05 * torch_bound  # past torch's, 0.141
            assert started.std().item() == pytest.approx(own.std().item(), rel=0.05)
        assert (lstm[f"_module.bias_ih_l{layer}"] == 0).all()
        assert torch.equal(lstm[f"_module.bias_hh_l{layer}"], lstmn[f"layers.{layer}.bias_hh"])  # zero but f's 1
        assert lstm[f"_module.bias_hh_l{layer}"].sum() == 50
    # the base row starts as torch does: its biases are not zero
    assert base["_module.bias_ih_l1"].abs().max() > 0.9 * torch_bound
    assert _unknown_row_is_zero(model)


@pytest.mark.every_row
def test_the_lstmn_in_the_peers_settings_started_as_torchs_lstm_has_its_start_in_both_layers(monkeypatch):
    lstmn, own, lstm, model = _started_as_the_other("sst2_lstmn_50_in_peer_settings_lstm_init",
                                                    "sst2_lstmn_50_in_peer_settings",
                                                    "sst2_basic_lstm_50_tuned_embeddings", monkeypatch)
    # eq. 7, both layers: torch's uniform start (its largest draws near the bound, its spread torch's)
    drawn = {name: parameter for name, parameter in lstmn.items()
             if re.fullmatch(r"layers\.[01]\.(weight|bias)_.h", name)}
    assert len(drawn) == 8
    assert all(0.95 / 50 ** 0.5 < parameter.abs().max() <= 1 / 50 ** 0.5 for parameter in drawn.values())
    torch.testing.assert_close(torch.stack([parameter.std() for parameter in drawn.values()]),
                               torch.stack([lstm["_module." + re.sub(r"layers\.(\d)\.(.*)", r"\2_l\1", name)].std()
                                            for name in drawn]), rtol=0.1, atol=0)
    # eq. 4's weights keep the LSTMN's own Xavier start
    kept = [name for name in lstmn if name.split(".")[2] in ("tape_key", "input_query", "summary_query", "scorer")]
    assert len(kept) == 8 and all(torch.equal(lstmn[name], own[name]) for name in kept)
    assert _unknown_row_is_zero(model)


def _built_as_the_base_but_one_setting(name: str, base: str, key: str, changed, monkeypatch):
    """Rows NAME and BASE, built: their configs equal but for NAME's `model.<key>`, which is BASE's with
    CHANGED set (a dict: an encoder's settings), or CHANGED itself where BASE leaves that model setting at its
    default; NAME's state holds every parameter of BASE's, drawn alike. Returns NAME's row and model and the keys of
    its state that BASE's lacks."""
    row, built = _built_row(name, monkeypatch)
    base_row, base_built = _built_row(base, monkeypatch)
    params, base_params = (Params.from_file(str(REPO_ROOT / of.config), json.dumps(of.overrides)).as_dict()
                           for of in (row, base_row))
    setting = params["model"].pop(key)
    if isinstance(changed, dict):
        assert setting == {**base_params["model"].pop(key), **changed}
    else:
        assert key not in base_params["model"] and setting == changed
    assert params == base_params
    own, started = base_built.model.state_dict(), built.model.state_dict()
    for parameter in own:
        assert torch.equal(own[parameter], started[parameter]), parameter
    return row, built.model, started.keys() - own.keys()


@pytest.mark.parametrize("window, data", [(2, ""), (5, ""), (2, "_sentences")])
@pytest.mark.every_row
def test_the_windowed_lstmn_rows_differ_from_the_lstmn_in_the_peers_settings_in_the_window_alone(window, data,
                                                                                                  monkeypatch):
    row, model, added = _built_as_the_base_but_one_setting(
        f"sst2_lstmn_50_in_peer_settings_window_{window}{data}", f"sst2_lstmn_50_in_peer_settings{data}",
        "seq2seq_encoder", {"type": "windowed_lstmn", "window": window}, monkeypatch)
    assert row.packages == ["windowed_lstmn"] and _row(f"sst2_lstmn_50_in_peer_settings{data}").packages == []
    assert [layer.window for layer in model._seq2seq_encoder.layers] == [window, window]
    assert added == set()  # the same parameters, drawn alike


@pytest.mark.parametrize("classes, start", [(2, 5.0), (2, 2.0), (5, 5.0)])
@pytest.mark.every_row
def test_the_recency_start_rows_differ_from_the_lstmn_in_the_peers_settings_in_beta_alone(classes, start,
                                                                                           monkeypatch):
    row, model, added = _built_as_the_base_but_one_setting(
        f"sst{classes}_lstmn_50_in_peer_settings_recency_start_{start:g}", f"sst{classes}_lstmn_50_in_peer_settings",
        "seq2seq_encoder", {"recency_start": start}, monkeypatch)
    assert row.packages == []  # recorded with the instrument recency_lstmn, which the lstmn's option replaced
    # the same start, draw for draw, and β at its start in both layers (no initializer regex reaches it)
    assert added == {f"_seq2seq_encoder.layers.{k}.recency_score" for k in (0, 1)}
    assert [layer.recency_score.item() for layer in model._seq2seq_encoder.layers] == [start, start]


@pytest.mark.every_row
def test_the_paper_settings_recency_row_differs_from_the_lstmn_row_in_its_recency_start_alone(monkeypatch):
    row, model, added = _built_as_the_base_but_one_setting(
        "sst2_lstmn_recency_start_5", "sst2_lstmn", "seq2seq_encoder", {"recency_start": 5.0}, monkeypatch)
    assert row.packages == [] and added == {"_seq2seq_encoder.layers.0.recency_score"}
    assert model._seq2seq_encoder.layers[0].recency_score.item() == 5.0


@pytest.mark.every_row
def test_the_snli_recency_row_differs_from_the_lstmn_encoder_row_in_beta_alone(monkeypatch):
    row, model, added = _built_as_the_base_but_one_setting(
        "snli_decomposable_attention_lstmn_encoder_recency_start_5", "snli_decomposable_attention_lstmn_encoder",
        "premise_encoder", {"recency_start": 5.0}, monkeypatch)
    assert row.packages == []  # recorded with the instrument recency_lstmn, which the lstmn's option replaced
    # the hypothesis is read by the premise's encoder, so its state holds β under both names
    assert added == {f"_{side}_encoder.layers.0.recency_score" for side in ("premise", "hypothesis")}
    assert model._hypothesis_encoder is model._premise_encoder
    assert model._premise_encoder.layers[0].recency_score.item() == 5.0


@pytest.mark.every_row
def test_the_deep_fusion_recency_row_differs_from_the_papers_snli_model_in_its_recency_start_alone(monkeypatch):
    row, model, added = _built_as_the_base_but_one_setting(
        "snli_lstmn_deep_fusion_recency_start_5", "snli_lstmn_deep_fusion", "recency_start", 5.0, monkeypatch)
    assert row.packages == [] and added == {"_encoder.recency_score", "_decoder.recency_score"}
    assert model._encoder.recency_score.item() == model._decoder.recency_score.item() == 5.0
