"""research/snli_erased_direction.py on small word-aligned decomposable-attention models whose erasure was
estimated on the very pairs it then reads: the position erasure's direction is the one that carries position there
(cosine 1), the control's is the states' first principal direction there, and each figure is the one written out."""
import sys

import pytest
import torch

from research.tests.saved_models import SNLI_SAMPLE, save_with_random_weights, shrunk_decomposable_attention_config
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "research"))
import snli_erased_direction  # noqa: E402
import word_aligned_decomposable_attention  # noqa: E402,F401  (registers the model)
from allennlp.data import Batch  # noqa: E402

SNLI = str(REPO_ROOT / SNLI_SAMPLE)


def estimated_run(folder, alignment_input: str):
    """The shrunk instrument with `alignment_input`, its weights drawn, its erasure estimated from one training
    forward over every pair of the sample, saved; the model."""
    config = shrunk_decomposable_attention_config()
    config["model"].update(type="decomposable_attention_aligned_on_words", alignment_input=alignment_input)
    model, instances = save_with_random_weights(folder, config, SNLI, seed=3)
    batch = Batch(instances)
    batch.index_instances(model.vocab)
    for module in model.modules():  # no dropout, so the estimate sees the states the script reads
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    with torch.no_grad():
        model.train()(**batch.as_tensor_dict())
    torch.save(model.state_dict(), folder / "best.th")
    return model.eval(), instances


@pytest.mark.parametrize("alignment_input", ["position_erased_states", "principal_direction_erased_states",
                                             "position_free_principal_direction_erased_states"])
def test_the_erased_direction_against_the_figures_written_out(tmp_path, alignment_input, capsys):
    model, instances = estimated_run(tmp_path, alignment_input)
    snli_erased_direction.main([SNLI, str(tmp_path), "--json", str(tmp_path / "figures.json")])
    printed = capsys.readouterr().out
    figures = snli_erased_direction.erased_direction(tmp_path, SNLI)
    # written out: the sample's states, pair by pair (a batch of one), both sentences
    states, positions = [], []
    with torch.no_grad():
        for instance in instances:
            batch = Batch([instance])
            batch.index_instances(model.vocab)
            tensors = batch.as_tensor_dict()
            for sentence in ("premise", "hypothesis"):
                words = model._text_field_embedder(tensors[sentence])
                a = model._premise_encoder(words, torch.ones(words.shape[:2], dtype=torch.bool))[0]
                states.append(a.double())
                positions.append(torch.arange(1, len(a) + 1, dtype=torch.double))
    a, i = torch.cat(states), torch.cat(positions)
    a, i = a - a.mean(0), i - i.mean()
    covariance = (a * i[:, None]).mean(0)
    u = model.erasure().direction().double()
    first = torch.linalg.eigh(a.T @ a / len(a)).eigenvectors[:, -1]
    for v, names in ((u, snli_erased_direction.COLUMNS[:3]), (first, snli_erased_direction.COLUMNS[3:])):
        along = a @ v
        expected = [float(v @ covariance / covariance.norm()),
                    float(((along - along.mean()) * i).mean() / (along.std(unbiased=False) * i.std(unbiased=False))),
                    float(along.pow(2).mean() / a.pow(2).sum(1).mean())]
        assert [figures[name] for name in names] == pytest.approx(expected, abs=1e-5)
    if alignment_input == "position_erased_states":  # estimated on these words: the direction of their position
        assert figures["cos(u, Cov(a, i))"] == pytest.approx(1.0, abs=1e-5)
    elif alignment_input == "principal_direction_erased_states":  # the states' first principal direction here
        assert abs(figures["cos(u, Cov(a, i))"]) == pytest.approx(abs(figures["cos(PC1, Cov(a, i))"]), abs=1e-5)
        assert figures["var share of u"] == pytest.approx(figures["var share of PC1"], abs=1e-6)
    else:  # orthogonal to position's direction here, and holding less than the first principal direction
        assert abs(figures["cos(u, Cov(a, i))"]) < 1e-5 and abs(figures["corr(a . u, i)"]) < 1e-5
        assert 0 < figures["var share of u"] < figures["var share of PC1"]
    assert f"| {tmp_path.name} | {figures['cos(u, Cov(a, i))']:+.3f} |" in printed


def test_a_run_without_an_erasure_is_refused_by_name(tmp_path):
    config = shrunk_decomposable_attention_config()
    save_with_random_weights(tmp_path, config, SNLI, seed=3)
    with pytest.raises(SystemExit, match=f"{tmp_path}: not a run of an `..._erased_states` alignment"):
        snli_erased_direction.main([SNLI, str(tmp_path)])
    estimated_run(tmp_path, "position_erased_states")
    torch.save({name: value * 0 if name.endswith("covariance") else value
                for name, value in torch.load(tmp_path / "best.th").items()}, tmp_path / "best.th")
    with pytest.raises(SystemExit, match="its erasure was never estimated"):
        snli_erased_direction.main([SNLI, str(tmp_path)])
