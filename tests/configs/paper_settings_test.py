"""
Every shipped config keeps the paper settings its header claims (issue 14), read through AllenNLP's `Params` exactly
as `allennlp train` reads them (the defaults of memplugins.compat.config_defaults included), so that a later edit cannot drift
silently. Deviations that the headers document are asserted as documented.
"""
import copy
import re

import pytest
import torch
from allennlp.common import Params
from allennlp.training.optimizers import Optimizer

from tests.config_models import CONFIGS, REPO_ROOT, build_config_model


def config(name: str) -> dict:
    return Params.from_file(str(REPO_ROOT / "training_config" / f"{name}.jsonnet")).as_dict(quiet=True)


def optimizer(cfg: dict) -> dict:
    """The optimizer's hyperparameters: `fused` picks torch's implementation of the same update, asserted below."""
    return {key: value for key, value in cfg["trainer"]["optimizer"].items() if key != "fused"}


def batch_size(cfg: dict) -> int:
    loader = cfg["data_loader"]
    return loader["batch_sampler"]["batch_size"] if "batch_sampler" in loader else loader["batch_size"]


@pytest.mark.parametrize("name", sorted(path.split("/")[-1][: -len(".jsonnet")] for path in CONFIGS))
def test_every_adam_and_adagrad_config_uses_the_fused_update(name):
    """torch's default per-parameter loop cost as much as the model's forward and backward on the SST LSTMN
    (benchmarks/speed/optimizer_step.py); plain SGD (the PTB LM) is one pass either way."""
    settings = config(name)["trainer"]["optimizer"]
    if settings["type"] in ("adam", "adamw", "adagrad"):
        assert settings.get("fused") is True, name
    else:
        assert settings["type"] == "sgd" and not settings.get("momentum"), name


@pytest.mark.parametrize("name", sorted(path.split("/")[-1][: -len(".jsonnet")] for path in CONFIGS))
def test_every_config_has_a_header_naming_its_paper_and_section(name):
    text = (REPO_ROOT / "training_config" / f"{name}.jsonnet").read_text()
    header = text.split("\n(import")[0] if text.startswith("//") else ""
    assert header.startswith("//"), f"{name}: no header comment"
    libsonnets = [line.split("'")[1] for line in text.splitlines() if "import '" in line]
    full = header + "".join((REPO_ROOT / "training_config" / lib).read_text() for lib in libsonnets)
    assert any(author in full for author in ("Rocktäschel", "Cheng", "Munkhdalai", "Le and Zuidema", "Tutek")), name
    assert "section" in full.lower() or "Table" in full, f"{name}: the header names no section / table"


@pytest.mark.parametrize("name", sorted(path.split("/")[-1][: -len(".jsonnet")] for path in CONFIGS))
def test_a_plateau_schedule_follows_the_validation_score_upwards(name):
    # AllenNLP steps the scheduler with `combined_score`, which is higher-is-better whatever the metric's sign
    # ("-perplexity" gives -perplexity): mode "min" decays the learning rate at every epoch that improves
    scheduler = config(name)["trainer"].get("learning_rate_scheduler") or {}
    if scheduler.get("type") == "reduce_on_plateau":
        assert scheduler.get("mode") == "max", name


@pytest.mark.parametrize("name, mode, hidden, two_way, shared", [
    ("snli_rte_conditional", "conditional", 100, False, False),
    ("snli_rte_attention", "attention", 100, False, False),
    ("snli_rte_word_by_word", "word_by_word", 100, False, False),
    ("snli_rte_two_way", "word_by_word", 100, True, False),
    ("snli_rte_shared", "conditional", 159, False, True),
])
def test_rocktaschel(name, mode, hidden, two_way, shared):
    cfg = config(name)
    model = cfg["model"]
    assert (model["mode"], model["hidden_size"], model["two_way"], model["shared_encoders"]) == (mode, hidden, two_way, shared)
    assert model["dropout"] in (0.0, 0.1, 0.2)  # section 3's grid
    opt = optimizer(cfg)
    assert opt["type"] == "adam" and opt["lr"] in (1e-4, 3e-4, 1e-3) and opt["weight_decay"] in (0.0, 1e-4, 3e-4, 1e-3)
    assert opt["betas"] == [0.9, 0.999]
    assert model["text_field_embedder"]["token_embedders"]["tokens"]["trainable"] is False  # fixed word vectors


@pytest.mark.parametrize("name, fusion", [("snli_lstmn_no_fusion", "none"), ("snli_lstmn_shallow_fusion", "shallow"),
                                          ("snli_lstmn_deep_fusion", "deep")])
def test_cheng_snli(name, fusion):
    cfg = config(name)
    model = cfg["model"]
    assert model["fusion"] == fusion and model["hidden_size"] == 100
    assert 0.1 <= model["dropout"] <= 0.4
    # "a 2-layer neural network classifier with ReLU": one ReLU hidden layer + the output layer
    assert model["classifier_feedforward"]["num_layers"] == 1 and model["classifier_feedforward"]["activations"] == "relu"
    opt = optimizer(cfg)
    assert (opt["type"], opt["lr"], opt["betas"]) == ("adam", 1e-3, [0.9, 0.999])
    assert batch_size(cfg) in (16, 32)


def test_cheng_sst_and_ptb():
    sst = config("sst_lstmn")
    assert sst["model"]["seq2seq_encoder"]["hidden_size"] == 168 and batch_size(sst) == 5
    assert sst["model"]["feedforward"]["num_layers"] == 1 and sst["model"]["seq2vec_encoder"]["averaged"]
    for name, layers in (("ptb_lstmn_lm", 1), ("ptb_lstmn_lm_3layers", 3)):
        ptb = config(name)
        contextualizer = ptb["model"]["contextualizer"]
        assert (contextualizer["type"], contextualizer["hidden_size"], contextualizer["num_layers"]) == ("lstmn", 300, layers)
        assert ptb["model"]["text_field_embedder"]["token_embedders"]["tokens"]["embedding_dim"] == 150
        # the paper's SGD 0.65 and clipping at 5 on the sentence-summed loss, in the token-mean convention (the header)
        assert optimizer(ptb) == {"type": "sgd", "lr": pytest.approx(0.65 * 22.1)}
        assert ptb["trainer"]["learning_rate_scheduler"]["factor"] == 0.85
        assert ptb["trainer"]["grad_norm"] == pytest.approx(5.0 / 22.1)
        assert batch_size(ptb) == 40
        assert ptb["model"]["dropout"] == 0.5  # the documented deviation (LM_DROPOUT; the paper states none)


@pytest.mark.parametrize("name, variant", [("snli_nse", "nse"), ("snli_mma_nse", "mma_nse"),
                                           ("snli_mma_nse_attention", "mma_nse_attention")])
def test_munkhdalai_snli(name, variant):
    cfg = config(name)
    model = cfg["model"]
    # the NSEs as components: k = 300, dropout 0.3 in the read and write networks, the authors' wide linear compose
    encoders = [model["premise_encoder"]] + ([model["hypothesis_encoder"]] if variant != "nse" else [])
    assert "hypothesis_encoder" in model or variant == "nse"
    for extra, encoder in enumerate(encoders):
        assert (encoder["type"], encoder["hidden_size"], encoder["dropout"], encoder["num_extra_memories"]) == (
            "nse", 300, 0.3, extra)
        assert encoder["compose_activation"] == "linear" and encoder["compose_size"] == (2 + extra) * 300
    assert model["premise_attention"] == (variant == "mma_nse_attention") and model["dropout"] == 0.3
    assert model["classifier_feedforward"]["hidden_dims"] == 1024 and model["classifier_feedforward"]["num_layers"] == 1
    assert optimizer(cfg) == {"type": "adam", "lr": 3e-4, "weight_decay": 3e-5} and batch_size(cfg) == 128


@pytest.mark.parametrize("name, units", [("sst2_nse", 1024), ("sst5_nse", 300)])
def test_munkhdalai_sst(name, units):
    cfg = config(name)
    model = cfg["model"]
    assert model["seq2seq_encoder"]["hidden_size"] == 300 and model["seq2seq_encoder"]["dropout"] == 0.5  # read/write
    assert model["feedforward"]["hidden_dims"] == units and model["feedforward"]["dropout"] == 0.5  # before softmax
    assert model.get("dropout", 0.0) == 0.0  # nothing on the pooled vector before the ReLU layer
    assert optimizer(cfg) == {"type": "adam", "lr": 3e-4, "weight_decay": 3e-5} and batch_size(cfg) == 64


@pytest.mark.parametrize("name", ["yelp13_nse_nse", "yelp13_nse_lstm"])
def test_munkhdalai_documents(name):
    cfg = config(name)
    model = cfg["model"]
    assert model["sentence_encoder"]["dropout"] == 0.15 and model["dropout"] == 0.2  # read/write nets; softmax layer
    if model["document_encoder"]["type"] == "nse":
        assert model["document_encoder"]["dropout"] == 0.15
    else:
        assert model["document_dropout"] == 0.15  # the document LSTM's 15%
    assert optimizer(cfg) == {"type": "adam", "lr": 3e-4, "weight_decay": 1e-5} and batch_size(cfg) == 32


@pytest.mark.parametrize("name, lr", [("iwslt14_nse_nse", 3e-4), ("iwslt14_nse_lstm", 3e-4), ("iwslt14_lstm_lstm", 1e-3)])
def test_munkhdalai_nmt(name, lr):
    cfg = config(name)
    assert cfg["dataset_reader"]["max_length"] == 25 and cfg["dataset_reader"]["lowercase"]
    assert cfg["vocabulary"]["max_vocab_size"] == {"target_tokens": 25000}
    assert cfg["model"]["encoder"]["hidden_size"] == 300 and cfg["model"]["decoder"]["beam_search"]["beam_size"] == 1
    assert optimizer(cfg) == {"type": "adam", "lr": lr, "weight_decay": 3e-5} and batch_size(cfg) == 128


@pytest.mark.parametrize("name, cell", [("sst5_tree_lstm", "tree_lstm"), ("sst2_tree_lstm", "tree_lstm"),
                                        ("sst5_tree_rnn", "tree_rnn")])
def test_le_zuidema(name, cell):
    cfg = config(name)
    encoder = cfg["model"]["encoder"]
    assert (encoder["type"], encoder["hidden_dim"], encoder["activation"]) == (cell, 50, "tanh")
    assert optimizer(cfg) == {"type": "adagrad", "lr": 0.05, "weight_decay": 1e-3} and batch_size(cfg) == 5
    assert cfg["model"].get("dropout", 0.0) == 0.0


@pytest.mark.parametrize("name, full, iterations", [("sst2_iram_vanilla", False, 3), ("sst2_iram_full", True, 3),
                                                    ("sst5_iram_full", True, 3), ("sst2_bilstm_baseline", False, 0)])
def test_tutek_snajder(name, full, iterations):
    cfg = config(name)
    model = cfg["model"]
    encoder = model["encoder"]
    assert encoder["num_iterations"] == iterations and encoder["hidden_size"] == 400 and encoder["dropout"] == 0.2
    assert (encoder["num_context_layers"], encoder["num_query_layers"]) == ((2, 1) if full else (1, 0))
    assert encoder["embedding_highway_layers"] == (2 if full else 0) and encoder["query_highway"] is full
    assert model["text_field_embedder"]["token_embedders"]["tokens"]["type"] == "standardized_embedding"
    assert model["maxout"]["num_layers"] == 2 and model["maxout"]["output_dims"] == 200 and model["maxout"]["pool_sizes"] == 4
    assert optimizer(cfg) == {"type": "adam", "lr": 3e-4, "amsgrad": True, "weight_decay": 3e-5}
    assert cfg["trainer"]["grad_norm"] == 5.0 and batch_size(cfg) == 32


# Configs whose paper states an L2 term on every parameter, word vectors included, with an adaptive optimizer:
# kept literal (Le & Zuidema's J(θ) with AdaGrad).
L2_ON_TUNED_EMBEDDINGS_BY_THE_PAPER = {"sst2_tree_lstm", "sst5_tree_lstm", "sst5_tree_rnn"}


@pytest.mark.parametrize("name", sorted(path.split("/")[-1][: -len(".jsonnet")] for path in CONFIGS))
def test_no_adaptive_l2_erases_a_fine_tuned_pretrained_embedding_table(name):
    """Adam's and AdaGrad's L2 adds lambda * w to every row's gradient and then divides a gradient by its own size,
    so every row that a batch does not use moves by about lr towards 0 at every step: the SST LSTMN's GloVe
    vectors were gone within a few hundred batches (median row norm 4.9 -> 0.09). A config that fine-tunes
    pretrained vectors under such an optimizer with weight decay must exempt the table (`parameter_groups`)."""
    settings = config(name)["trainer"]["optimizer"]
    if settings["type"] not in ("adam", "adagrad") or not settings.get("weight_decay"):
        pytest.skip("no adaptive optimizer with weight decay")
    named = list(build_config_model(f"training_config/{name}.jsonnet", num_instances=2).model.named_parameters())
    # the optimizer exactly as `allennlp train` builds it from the config, parameter groups included
    built = Optimizer.from_params(model_parameters=named, params=Params(copy.deepcopy(settings)))
    decay = {id(p): group["weight_decay"] for group in built.param_groups for p in group["params"]}
    embedders = config(name)["model"].get("text_field_embedder", {}).get("token_embedders", {})
    tuned = [key for key, embedder in embedders.items()
             if embedder.get("pretrained_file") and embedder.get("trainable", True)]
    for key in tuned:
        pattern = re.compile(rf"^_text_field_embedder\.token_embedder_{key}\.")
        table = [p for parameter_name, p in named if pattern.search(parameter_name) and p.requires_grad]
        assert table, f"{name}: no trainable parameter for embedder {key}"
        decays = {decay[id(p)] for p in table}
        if name in L2_ON_TUNED_EMBEDDINGS_BY_THE_PAPER:
            assert decays == {settings["weight_decay"]}, name
        else:
            assert decays == {0}, f"{name}: the fine-tuned {key} table is under {settings['type']}'s weight decay"
    # the network's own weights keep the paper's L2
    others = [p for parameter_name, p in named if not parameter_name.startswith("_text_field_embedder.")]
    assert {decay[id(p)] for p in others if p.requires_grad} == {settings["weight_decay"]}, name


@pytest.mark.parametrize("kind, changes", [("adam", False), ("sgd", True)])
def test_cheng_sst_glove_gradient_scale_changes_nothing_under_the_papers_adam(kind, changes):
    """Cheng et al. scale the GloVe words' gradient by 0.35 in the first epoch; sst_lstmn does not, and its header
    says why: Adam's step m_hat / (sqrt(v_hat) + eps) is unchanged when every gradient a parameter has had is
    multiplied by one constant c (m scales by c, sqrt(v) by |c|), so in the first epoch the scaled rows take the
    same steps (up to eps). Checked with sst_lstmn's own optimizer settings (in float64, so eps is all that differs),
    and against SGD, where the same scale changes the steps (the check can fail)."""
    settings = {key: value for key, value in config("sst_lstmn")["trainer"]["optimizer"].items() if key != "fused"}
    if kind == "sgd":
        settings = {"type": "sgd", "lr": settings["lr"]}
    assert kind != "adam" or (settings["type"], settings["lr"], settings["betas"]) == ("adam", 0.002, [0.9, 0.999])
    # the table under the config's own parameter groups (its L2, unscaled, would break the invariance: the header)
    table_name = "_text_field_embedder.token_embedder_tokens.weight"
    generator = torch.Generator().manual_seed(0)
    initial = torch.randn(30, 6, generator=generator, dtype=torch.float64)
    batches = [torch.randint(0, 30, (5, 4), generator=generator) for _ in range(40)]
    targets = torch.randn(6, dtype=torch.float64, generator=generator)
    glove_rows = torch.arange(30) < 20  # rows found in the pretrained file

    def first_epoch(scale: float) -> torch.Tensor:
        table = torch.nn.Embedding(30, 6).double()
        with torch.no_grad():
            table.weight.copy_(initial)
        table.weight.register_hook(lambda grad: torch.where(glove_rows[:, None], scale * grad, grad))
        built = Optimizer.from_params(model_parameters=[(table_name, table.weight)],
                                      params=Params(copy.deepcopy(settings)))
        assert kind != "adam" or built.param_groups[0]["weight_decay"] == 0
        for tokens in batches:
            built.zero_grad()
            loss = ((table(tokens).mean(dim=1) - targets) ** 2).sum()
            loss.backward()
            built.step()
        return table.weight.detach()

    unscaled, scaled = first_epoch(1.0), first_epoch(0.35)
    assert not torch.equal(unscaled, initial)
    moved = (unscaled - initial).abs().max()
    difference = (unscaled - scaled).abs().max()
    if changes:
        assert difference > 0.1 * moved
    else:
        # all of it is eps (1e-8) against sqrt(v) of the smallest gradients: with eps 1e-14 it is < 1e-9 * moved
        assert difference < 1e-4 * moved
