"""research/word_aligned_decomposable_attention.py, the instrument of replicate.py's `..._word_alignment` rows:
it trains, saves and loads (AllenNLP's ModelTestCase), a pair alone is the same pair in a padded batch, its alignment
is Parikh et al.'s eq. 1 on the word vectors (untouched by the encoder) and its comparison eq. 2-5 on the encoder's
outputs, worked pair by pair from the model's parts."""
import copy
import json
import sys
from unittest import mock

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch
from allennlp.models import Model

from research.tests.saved_models import SNLI_SAMPLE, shrunk_decomposable_attention_config
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "research"))
import word_aligned_decomposable_attention  # noqa: E402,F401  (registers the model)

FIXED_BATCHES = {"data_loader.batch_sampler.shuffle": False, "data_loader.batch_sampler.padding_noise": 0.0}


def instrument_config(alignment_input: str = None) -> dict:
    config = shrunk_decomposable_attention_config()
    config["model"]["type"] = "decomposable_attention_aligned_on_words"
    if alignment_input is not None:
        config["model"]["alignment_input"] = alignment_input
    config["trainer"]["num_epochs"] = 1
    return config


def pooled_states(model, tensors):
    """Each sentence's unmasked states (the encoder called directly), pooled over both sentences, and the
    positions of their words, from 1."""
    states, positions = [], []
    for sentence in ("premise", "hypothesis"):
        mask = tensors[sentence]["tokens"]["tokens"] != 0
        states.append(model._premise_encoder(model._text_field_embedder(tensors[sentence]), mask)[mask])
        positions.append(torch.arange(1, mask.size(1) + 1).expand(mask.shape)[mask])
    return torch.cat(states), torch.cat(positions).float()


def projected_out(u):
    """P a = a - (a . u) u, written out."""
    return lambda x, a: a - (a @ u).unsqueeze(-1) * u


class TestWordAlignedDecomposableAttention(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.config = self.TEST_DIR / "config.json"
        self.config.write_text(json.dumps(instrument_config()))
        self.set_up_model(str(self.config), str(REPO_ROOT / SNLI_SAMPLE), seed=0)

    def test_train_save_load_and_padding(self):
        self.assert_alone_as_in_the_batch()
        self.train_save_and_load(self.config)

    def assert_alone_as_in_the_batch(self) -> None:
        # a pair alone is the same pair in the padded batch (ModelTestCase's own check is absolute, 1e-6, which the
        # float32 rounding of these logits, near 8, exceeds)
        self.model.eval()
        with torch.no_grad():
            batched = self.model(**self.dataset.as_tensor_dict())
            for k, instance in enumerate(self.instances):
                single = Batch([instance])
                single.index_instances(self.vocab)
                alone = self.model(**single.as_tensor_dict())
                assert torch.allclose(alone["label_logits"][0], batched["label_logits"][k], rtol=1e-5, atol=1e-5)
                words = len(instance["hypothesis"].tokens), len(instance["premise"].tokens)
                assert torch.allclose(alone["h2p_attention"][0], batched["h2p_attention"][k, :words[0], :words[1]],
                                      atol=1e-6)

    def train_save_and_load(self, config_path) -> None:
        check_gradients = self.check_model_computes_gradients_correctly

        def with_buffers_kept(model, *args, **kwargs):
            # the gradient check runs a training-mode forward on the trained model, which moves a running estimate
            # (the position erasure's, as it would batch norm's) in it and not in the loaded one; put back, so the
            # two are compared in the state that was saved
            buffers = {name: buffer.clone() for name, buffer in model.named_buffers()}
            check_gradients(model, *args, **kwargs)
            with torch.no_grad():
                for name, buffer in model.named_buffers():
                    buffer.copy_(buffers[name])

        with mock.patch.object(self, "check_model_computes_gradients_correctly", with_buffers_kept):
            self.ensure_model_can_train_save_and_load(
                str(config_path), overrides=json.dumps(FIXED_BATCHES),
                gradients_to_ignore={"_text_field_embedder.token_embedder_tokens.weight"})  # fixed GloVe

    def check_equations_pair_by_pair(self, model, aligned_input) -> torch.Tensor:
        """Far from uniform attention, each of 8 pairs alone against eq. 1-5 from the model's parts (eq. 1 on
        `aligned_input(x, a)` of each sentence's word vectors x and states a); then the model's alignment on the
        whole sample before and after the encoder's weights move, stacked."""
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.normal_(0, 0.6)
            for instance in self.instances[:8]:
                batch = Batch([instance])
                batch.index_instances(self.vocab)
                tensors = batch.as_tensor_dict()
                output = model(**tensors)
                x, y = (model._text_field_embedder(tensors[s]) for s in ("premise", "hypothesis"))
                a = model._premise_encoder(x, torch.ones(x.shape[:2], dtype=torch.bool))[0]
                b = model._premise_encoder(y, torch.ones(y.shape[:2], dtype=torch.bool))[0]
                aligned = aligned_input(x, a[None]), aligned_input(y, b[None])
                e = model._attend_feedforward(aligned[0])[0] @ model._attend_feedforward(aligned[1])[0].T  # eq. 1
                beta = torch.softmax(e, dim=1) @ b  # eq. 2: the hypothesis read by each premise word
                alpha = torch.softmax(e, dim=0).T @ a
                v1 = model._compare_feedforward(torch.cat([a, beta], -1)[None])[0].sum(0)  # eq. 3-4
                v2 = model._compare_feedforward(torch.cat([b, alpha], -1)[None])[0].sum(0)
                logits = model._aggregate_feedforward(torch.cat([v1, v2])[None])  # eq. 5
                assert torch.allclose(output["h2p_attention"][0], torch.softmax(e, dim=0).T, atol=1e-6)
                assert torch.allclose(output["label_logits"], logits, atol=1e-5)
            before = model(**self.dataset.as_tensor_dict())
            for parameter in model._premise_encoder.parameters():
                parameter.add_(torch.randn_like(parameter))
            after = model(**self.dataset.as_tensor_dict())
        assert not torch.allclose(before["label_logits"], after["label_logits"])
        return torch.stack([before["h2p_attention"], after["h2p_attention"]])

    def test_alignment_on_the_word_vectors_comparison_on_the_encoded_words(self):
        before, after = self.check_equations_pair_by_pair(self.model.eval(), lambda x, a: x)
        assert torch.equal(before, after)  # the encoder changes what is compared, never the alignment

    def test_aligning_on_the_words_and_states_sums_them_in_eq_1(self):
        torch.manual_seed(0)
        model = Model.from_params(vocab=self.vocab, params=Params(instrument_config("words_and_states")["model"]))
        before, after = self.check_equations_pair_by_pair(model.eval(), lambda x, a: x + a)
        assert not torch.allclose(before, after)  # here the encoder changes the alignment too
        with pytest.raises(ConfigurationError, match="alignment_input 'states' is not one of"):
            Model.from_params(vocab=self.vocab, params=Params(instrument_config("states")["model"]))

    def test_aligning_on_the_normalised_words_and_states_evens_them_in_eq_1(self):
        config = instrument_config("normalised_words_and_states")
        torch.manual_seed(0)
        # a copy: from_params consumes its dict, and the config is written out below
        model = Model.from_params(vocab=self.vocab, params=Params(copy.deepcopy(config["model"]))).eval()

        def layer_norm(v, gain, bias):  # Ba et al.'s, written out: each vector to mean 0, variance 1; gain, bias
            centred = v - v.mean(-1, keepdim=True)
            return centred / (centred.pow(2).mean(-1, keepdim=True) + 1e-5).sqrt() * gain + bias

        evened = model._evened_sum
        before, after = self.check_equations_pair_by_pair(
            model, lambda x, a: (layer_norm(x, evened.word_gain, evened.word_bias)
                                 + layer_norm(a, evened.state_gain, evened.state_bias)))
        assert not torch.allclose(before, after)
        tensors = self.dataset.as_tensor_dict()
        # both norms are trained with the rest
        model.train()
        model(**tensors)["loss"].backward()  # the sample's labels are in its tensors
        for parameter in evened.parameters():
            assert parameter.grad.abs().sum() > 0
        # and it trains, saves and loads with them
        variant = self.TEST_DIR / "normalised.json"
        variant.write_text(json.dumps(config))
        self.train_save_and_load(variant)

    def test_aligning_on_the_position_erased_states_projects_position_out_in_eq_1(self):
        config = instrument_config("position_erased_states")
        torch.manual_seed(0)
        model = Model.from_params(vocab=self.vocab, params=Params(copy.deepcopy(config["model"])))
        erasure = model._position_erasure
        tensors = self.dataset.as_tensor_dict()

        def position_r2(vectors, positions):
            # in-sample least squares of i on [vector, 1]; P a has one direction of float32 rounding only, which a
            # least-squares fit without a cut-off would blow up, so singular values below 1e-6 of the largest go
            design = torch.cat([vectors, torch.ones(len(vectors), 1)], 1).double()
            target = positions.double()
            fit = design @ torch.linalg.lstsq(design, target[:, None], rcond=1e-6, driver="gelsd").solution
            return 1 - float(((target - fit[:, 0]) ** 2).sum() / ((target - target.mean()) ** 2).sum())

        # before any training batch P is the identity; eval does not estimate
        with torch.no_grad():
            model.eval()(**tensors)
        assert not erasure.estimated and torch.equal(erasure.covariance, torch.zeros(8))
        # a training batch estimates Cov(a, i) over both sentences' words (written out) and P removes all of it: no
        # linear read-out of P a predicts a word's position on that batch, where one of a does
        model.train()
        with torch.no_grad():
            model(**tensors)
            a, i = pooled_states(model, tensors)
            covariance = ((a - a.mean(0)) * (i - i.mean())[:, None]).mean(0)
            assert torch.allclose(erasure.covariance, covariance, atol=1e-6)
            assert position_r2(a, i) > 0.2
            (erased,) = erasure(a)
            assert (erased - erased.mean(0)).mul((i - i.mean())[:, None]).mean(0).abs().max() < 1e-6  # Cov(P a, i)
            assert abs(position_r2(erased, i)) < 1e-6
            u = covariance / covariance.norm()
            assert torch.allclose(erasure(a)[0], a - (a @ u)[:, None] * u, atol=1e-6)
            # later batches move it as a running average (momentum 0.1)
            model(**tensors)
            assert torch.allclose(erasure.covariance, covariance, atol=1e-6)  # the same batch: the same estimate
            erasure.update([a[None] * 2], [torch.ones(1, len(a), dtype=torch.bool)])
            pooled = ((2 * a - 2 * a.mean(0)) * (torch.arange(1., len(a) + 1) - (len(a) + 1) / 2)[:, None]).mean(0)
            assert torch.allclose(erasure.covariance, 0.9 * covariance + 0.1 * pooled, atol=1e-5)
        # eq. 1 on P a_i and P b_j, eq. 2-5 on a_i and b_j, pair by pair, with the estimate fixed in evaluation
        before, after = self.check_equations_pair_by_pair(
            model.eval(), projected_out(erasure.covariance / erasure.covariance.norm()))
        assert not torch.allclose(before, after)
        assert "_position_erasure.covariance" in model.state_dict()  # the name the trained rows' weights carry
        self.estimate_train_save_and_load(config)

    def estimate_train_save_and_load(self, config) -> None:
        """The erasure's estimate is saved with the weights; the variant trains, saves and loads, and (with an
        estimate made, so that P is not the identity) a pair alone is itself in a batch."""
        variant = self.TEST_DIR / f"{config['model']['alignment_input']}.json"
        variant.write_text(json.dumps(config))
        self.set_up_model(str(variant), str(REPO_ROOT / SNLI_SAMPLE), seed=0)
        self.model.train()
        self.model(**self.dataset.as_tensor_dict())
        assert self.model.erasure().estimated
        self.assert_alone_as_in_the_batch()
        self.train_save_and_load(variant)

    def estimated_once(self, alignment_input: str):
        """The variant (weights drawn with seed 0), its P the identity before any training batch, then estimated by
        one training forward over the sample: (its config, the model, the sample's pooled states and positions)."""
        config = instrument_config(alignment_input)
        torch.manual_seed(0)
        model = Model.from_params(vocab=self.vocab, params=Params(copy.deepcopy(config["model"])))
        tensors = self.dataset.as_tensor_dict()
        assert torch.equal(model.erasure().direction(), torch.zeros(8))
        with torch.no_grad():
            model.train()(**tensors)
            a, i = pooled_states(model, tensors)
        return config, model, a, i

    def test_the_control_projects_the_first_principal_direction_out_in_eq_1(self):
        config, model, a, _ = self.estimated_once("principal_direction_erased_states")
        erasure = model.erasure()
        with torch.no_grad():
            centred = a - a.mean(0)
            covariance = centred.T @ centred / len(a)
            assert torch.allclose(erasure.covariance_matrix, covariance, atol=1e-6)
            values, vectors = torch.linalg.eigh(covariance.double())
            erased = erasure(a)[0].double()
            # nothing left along the top eigenvector; what is left keeps the other directions' variances
            assert float((erased @ vectors[:, -1]).abs().max()) < 1e-5
            centred = erased - erased.mean(0)
            left = torch.linalg.eigvalsh(centred.T @ centred / len(a))
            assert torch.allclose(left[1:], values[:-1], rtol=1e-4, atol=1e-7) and abs(float(left[0])) < 1e-7
            assert values[-1] > 1.5 * values[-2]  # a top direction apart from the next, so the check means something
        before, after = self.check_equations_pair_by_pair(model.eval(), projected_out(erasure.direction()))
        assert not torch.allclose(before, after)
        self.estimate_train_save_and_load(config)

    def test_the_position_free_control_projects_out_the_largest_direction_without_position(self):
        config, model, a, i = self.estimated_once("position_free_principal_direction_erased_states")
        erasure = model.erasure()
        with torch.no_grad():
            centred = a - a.mean(0)
            covariance = (centred * (i - i.mean())[:, None]).mean(0)
            assert torch.allclose(erasure.covariance, covariance, atol=1e-6)
            assert torch.allclose(erasure.covariance_matrix, centred.T @ centred / len(a), atol=1e-6)
            u = erasure.direction()
            assert abs(float(u @ covariance)) < 1e-5 * float(covariance.norm())  # u carries no linear position
            (erased,) = erasure(a)  # so P leaves Cov(a, i) as it was
            assert torch.allclose(((erased - erased.mean(0)) * (i - i.mean())[:, None]).mean(0), covariance, atol=1e-6)
            # and of the directions orthogonal to position's, u holds the most variance
            q = covariance / covariance.norm()
            orthogonal = torch.eye(8) - torch.outer(q, q)
            variance = lambda v: float((centred @ v).pow(2).mean())  # noqa: E731
            assert variance(u) == pytest.approx(float(torch.linalg.eigvalsh(
                orthogonal @ (centred.T @ centred / len(a)) @ orthogonal)[-1]), rel=1e-4)
            generator = torch.Generator().manual_seed(0)
            for _ in range(200):
                v = orthogonal @ torch.randn(8, generator=generator)
                assert variance(v / v.norm()) <= variance(u) * (1 + 1e-5)
        before, after = self.check_equations_pair_by_pair(model.eval(), projected_out(erasure.direction()))
        assert not torch.allclose(before, after)
        self.estimate_train_save_and_load(config)

    def test_an_encoder_is_required_and_must_keep_the_vectors_size(self):
        for change, message in ((lambda model: model.pop("premise_encoder"), "needs a premise_encoder"),
                                (lambda model: model["premise_encoder"].update(hidden_size=6),
                                 r"encoder's output \(6\) must be the word vectors' size \(8\)")):
            config = instrument_config()
            change(config["model"])
            with pytest.raises(ConfigurationError, match=message):
                Model.from_params(vocab=self.vocab, params=Params(config["model"]))
