"""
A measuring instrument for replicate.py's SNLI rows, not a model of the package: allennlp-models'
`decomposable_attention` with a sentence encoder, in which the alignment reads the word vectors and only the
comparison reads the encoder's outputs. With an encoder, allennlp-models' model aligns the encoded words (Parikh et
al. 2016, eq. 1 on a_i = encoder(premise)_i), so an encoder changes both what is aligned and what is compared; here
eq. 1 takes F of the embedded words, the same for every encoder, and eq. 2-4 the encoded ones:

    e_ij = F(x_i)^T F(y_j)                        eq. 1; x_i, y_j the premise's and hypothesis's word vectors
    beta_i = sum_j softmax_j(e_ij) b_j,  alpha_j = sum_i softmax_i(e_ij) a_i      eq. 2; a_i, b_j the encoder's outputs
    v1_i = G([a_i; beta_i]),  v2_j = G([b_j; alpha_j]), each summed over its sentence, then H (eq. 3-5)

So two encoders trained in it share one kind of alignment (learned, not fixed: F is trained with the rest), and a gap
between them that stays is not their alignment's. With `alignment_input="words_and_states"` eq. 1 takes the sum, e_ij
= F(x_i + a_i)^T F(y_j + b_j): the encoder's states with the word added back (a residual), so the alignment sees both
and can weigh them; whether an encoder's states then still cost the alignment is what that variant measures. F's
first layer weighs x_i and a_i alike there, so the larger of the two leads the sum (the projected word vectors were
2.6 times the states' size in the rows trained with it); `alignment_input="normalised_words_and_states"` evens them
first, e_ij = F(N_x(x_i) + N_a(a_i))^T F(N_x(y_j) + N_a(b_j)), N_x and N_a two layer norms (Ba et al. 2016; one for
the words, one for the states, each with its learned gain and bias per dimension): both enter at one size and
training sets their weights. `alignment_input="position_erased_states"` aligns the states, as allennlp-models'
model does, but with their position's direction projected out first: e_ij = F(P a_i)^T F(P b_j), P = I - u u^T, u the
unit vector of Cov(a, i) (a a word's state, i its place in its sentence, from 1, over the words of both sentences).
Since Cov(P a, i) = P Cov(a, i) = 0, no linear read-out of P a predicts i better than i's mean (Belrose et al. 2023's
condition for linear concept erasure; theirs is the oblique projection that moves a least, this the orthogonal one);
what position a state holds nonlinearly stays. Cov(a, i) is estimated as batch norm's statistics are: from each
training batch's words, without gradient, as a running average (momentum 0.1, the first batch's taken as it is), used
in training after the update and fixed in evaluation, so a pair's alignment does not depend on its batch. Its
control, `alignment_input="principal_direction_erased_states"`, projects out the states' first principal direction
instead (the top eigenvector of Cov(a, a), estimated the same way): as much of the states' variance or more, chosen
without regard to position, so that a gain from erasing position is not a gain from erasing any large direction (as
trained, that direction ran with position too, |cos| 0.62-0.76 with Cov(a, i); docs/results.md "SNLI");
`alignment_input="position_free_principal_direction_erased_states"` projects out the first principal direction of the
states with position's direction removed first, a large direction that carries no linear position. Everything else
is `DecomposableAttention`'s: the constructor's other parameters, the metrics, the output (`h2p_attention` and
`p2h_attention` included), so its configs change only `model.type` (and `alignment_input` for the variants).

Registered as a `Model` with name "decomposable_attention_aligned_on_words" when this module is imported (replicate.py's
rows name it in `packages`; the run analyses import it with the plugins).
"""
from typing import Any, Dict, List, Tuple

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors
from allennlp.models.model import Model
from allennlp.nn.util import get_text_field_mask, masked_softmax, weighted_sum
from allennlp_models.pair_classification.models.decomposable_attention import DecomposableAttention
from torch.nn.functional import layer_norm


class EvenedSum(torch.nn.Module):
    """N_x(x) + N_a(a): two layer norms over the last dimension (Ba et al. 2016; each with its gain and bias, started
    at 1 and 0), one for the words and one for the states, summed. Written with the functional layer norm because
    AllenNLP's NormalizationBiasVerification flags any module with a bias that runs just before a norm module, and two
    norm modules run one after the other would be flagged though neither feeds the other."""

    def __init__(self, dim: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.word_gain, self.state_gain = torch.nn.Parameter(torch.ones(dim)), torch.nn.Parameter(torch.ones(dim))
        self.word_bias, self.state_bias = torch.nn.Parameter(torch.zeros(dim)), torch.nn.Parameter(torch.zeros(dim))

    def forward(self, words: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
        shape = words.shape[-1:]
        return (layer_norm(words, shape, self.word_gain, self.word_bias, self.eps)
                + layer_norm(states, shape, self.state_gain, self.state_bias, self.eps))


class DirectionErasure(torch.nn.Module):
    """P a = a - (a . u) u: one direction u of the states projected out, u the unit vector of a running statistic of
    the states (a buffer, saved with the weights) that `update` moves toward a training batch's estimate (momentum
    0.1; the first batch's taken as it is) without gradient, as batch norm's running statistics; before any update u
    is zero and P the identity. Subclasses say which statistics they keep (`STATISTICS`, buffers of those names:
    `covariance`, Cov(a, i); `covariance_matrix`, Cov(a, a)) and which direction of them is u."""

    STATISTICS: Tuple[str, ...] = ()

    def __init__(self, dim: int, momentum: float = 0.1) -> None:
        super().__init__()
        self.momentum = momentum
        self.register_buffer("estimated", torch.tensor(False))
        shapes = {"covariance": (dim,), "covariance_matrix": (dim, dim)}
        for name in self.STATISTICS:
            self.register_buffer(name, torch.zeros(shapes[name]))

    @staticmethod
    def words(states: List[torch.Tensor], masks: List[torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
        """The unmasked words' states of each (batch, words, dim) tensor, pooled, and their positions (from 1;
        padding is at the end of a sentence, so a word's index in its row is its position)."""
        words = torch.cat([s[m] for s, m in zip(states, masks)])
        positions = torch.cat([torch.arange(1, m.size(1) + 1, dtype=s.dtype, device=s.device).expand(m.shape)[m]
                               for s, m in zip(states, masks)])
        return words, positions

    def update(self, states: List[torch.Tensor], masks: List[torch.Tensor]) -> None:
        """Each statistic in `STATISTICS` moved toward its estimate over the unmasked words of `states`, pooled."""
        with torch.no_grad():
            words, positions = self.words(states, masks)
            centred, places = words - words.mean(0), positions - positions.mean()
            batch = {"covariance": lambda: self.covariance_with_position(centred, places),
                     "covariance_matrix": lambda: centred.T @ centred / len(centred)}
            for name in self.STATISTICS:
                statistic = getattr(self, name)
                if bool(self.estimated):
                    statistic.lerp_(batch[name](), self.momentum)
                else:
                    statistic.copy_(batch[name]())
            self.estimated.fill_(True)

    @staticmethod
    def covariance_with_position(centred: torch.Tensor, places: torch.Tensor) -> torch.Tensor:
        """Cov(a, i) of centred states (words, dim) and their centred positions (words,)."""
        return (centred * places[:, None]).mean(0)

    @staticmethod
    def top_eigenvector(matrix: torch.Tensor) -> torch.Tensor:
        """The unit eigenvector of a symmetric matrix with the largest eigenvalue (its sign is eigh's)."""
        return torch.linalg.eigh(matrix).eigenvectors[:, -1]  # eigenvalues ascending

    def position_direction(self) -> torch.Tensor:
        """Cov(a, i) / |Cov(a, i)| (zero before any update)."""
        return self.covariance / self.covariance.norm().clamp(min=1e-12)

    def direction(self) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, *states: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        """P a for each tensor of states, with one u (found once: the principal directions take an eigh)."""
        u = self.direction()
        return tuple(a - (a @ u).unsqueeze(-1) * u for a in states)


class PositionErasure(DirectionErasure):
    """u = Cov(a, i) / |Cov(a, i)|: the direction of a word's state a that covaries with its position i, so that
    Cov(P a, i) = 0 (see the module's docstring); the buffer `covariance` holds Cov(a, i)."""

    STATISTICS = ("covariance",)

    def direction(self) -> torch.Tensor:
        return self.position_direction()


class PrincipalDirectionErasure(DirectionErasure):
    """u the states' first principal direction, the eigenvector of their covariance Cov(a, a) (the buffer
    `covariance_matrix`) with the largest eigenvalue: the control for `PositionErasure`, a direction that holds as
    much of the states' variance or more (in three position-erased runs the position direction held 6-8 % of it,
    the first principal direction 8-11 %) and is chosen without regard to position."""

    STATISTICS = ("covariance_matrix",)

    def direction(self) -> torch.Tensor:
        if not bool(self.estimated):
            return torch.zeros_like(self.covariance_matrix[0])
        return self.top_eigenvector(self.covariance_matrix)


class PositionFreePrincipalDirectionErasure(DirectionErasure):
    """u the first principal direction of the states with their position's direction q = Cov(a, i) / |Cov(a, i)|
    projected out first, the top eigenvector of (I - q q^T) Cov(a, a) (I - q q^T): the largest direction of the
    states that carries no linear position (u . Cov(a, i) = 0, so Cov(a . u, i) = 0 and P leaves Cov(a, i) as it
    is). The control `PrincipalDirectionErasure` turned out not to be: its direction ran with position. Buffers
    `covariance` (Cov(a, i)) and `covariance_matrix` (Cov(a, a)), estimated together."""

    STATISTICS = ("covariance", "covariance_matrix")

    def direction(self) -> torch.Tensor:
        if not bool(self.estimated):
            return torch.zeros_like(self.covariance)
        q = self.position_direction()
        projector = torch.eye(len(q), dtype=q.dtype, device=q.device) - torch.outer(q, q)
        return self.top_eigenvector(projector @ self.covariance_matrix @ projector)


@Model.register("decomposable_attention_aligned_on_words")
class WordAlignedDecomposableAttention(DecomposableAttention):
    """`decomposable_attention` aligning the word vectors and comparing the encoded words (see the module's
    docstring). It takes `DecomposableAttention`'s parameters; `premise_encoder` is required (without one the two
    models are the same) and its output size must be the word vectors' (the compare layer reads either).

    # Parameters

    alignment_input : `str`, optional (default = `"words"`)
        What eq. 1's F reads: `"words"`, the word vectors x_i; `"words_and_states"`, x_i + a_i;
        `"normalised_words_and_states"`, N_x(x_i) + N_a(a_i), each layer-normalised first; `"position_erased_states"`,
        P a_i, the states with their position's direction projected out; `"principal_direction_erased_states"`, the
        states with their first principal direction projected out (the control for the one before);
        `"position_free_principal_direction_erased_states"`, with the first principal direction orthogonal to
        position's projected out (the control that carries no linear position).
    """

    ERASURES = {"position_erased_states": PositionErasure,
                "principal_direction_erased_states": PrincipalDirectionErasure,
                "position_free_principal_direction_erased_states": PositionFreePrincipalDirectionErasure}
    ALIGNMENT_INPUTS = ("words", "words_and_states", "normalised_words_and_states", *ERASURES)

    def __init__(self, *args, alignment_input: str = "words", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if alignment_input not in self.ALIGNMENT_INPUTS:
            raise ConfigurationError(f"decomposable_attention_aligned_on_words: alignment_input {alignment_input!r} "
                                     f"is not one of {self.ALIGNMENT_INPUTS}")
        self._alignment_input = alignment_input
        if self._premise_encoder is None:
            raise ConfigurationError("decomposable_attention_aligned_on_words needs a premise_encoder; without one "
                                     "it is decomposable_attention")
        for encoder in (self._premise_encoder, self._hypothesis_encoder):
            if encoder.get_output_dim() != self._text_field_embedder.get_output_dim():
                raise ConfigurationError(
                    f"decomposable_attention_aligned_on_words: the encoder's output ({encoder.get_output_dim()}) "
                    f"must be the word vectors' size ({self._text_field_embedder.get_output_dim()})")
        if alignment_input == "normalised_words_and_states":
            # made after DecomposableAttention's initializer ran, so they start as layer norm does: gain 1, bias 0
            self._evened_sum = EvenedSum(self._text_field_embedder.get_output_dim())
        if alignment_input == "position_erased_states":  # its name kept: the trained rows' weights carry it
            self._position_erasure = PositionErasure(self._text_field_embedder.get_output_dim())
        elif alignment_input in self.ERASURES:
            self._direction_erasure = self.ERASURES[alignment_input](self._text_field_embedder.get_output_dim())

    def erasure(self) -> DirectionErasure:
        """The erasure of the `..._erased_states` variants."""
        if self._alignment_input == "position_erased_states":
            return self._position_erasure
        return self._direction_erasure

    def forward(  # type: ignore
        self,
        premise: TextFieldTensors,
        hypothesis: TextFieldTensors,
        label: torch.IntTensor = None,
        metadata: List[Dict[str, Any]] = None,
    ) -> Dict[str, torch.Tensor]:
        words_premise = self._text_field_embedder(premise)
        words_hypothesis = self._text_field_embedder(hypothesis)
        premise_mask = get_text_field_mask(premise)
        hypothesis_mask = get_text_field_mask(hypothesis)
        encoded_premise = self._premise_encoder(words_premise, premise_mask)
        encoded_hypothesis = self._hypothesis_encoder(words_hypothesis, hypothesis_mask)

        # eq. 1 on the word vectors (or on them plus the states, or on the states less one direction): the one
        # change from DecomposableAttention.forward
        aligned_premise, aligned_hypothesis = words_premise, words_hypothesis
        if self._alignment_input == "words_and_states":
            aligned_premise, aligned_hypothesis = words_premise + encoded_premise, words_hypothesis + encoded_hypothesis
        elif self._alignment_input == "normalised_words_and_states":
            aligned_premise = self._evened_sum(words_premise, encoded_premise)
            aligned_hypothesis = self._evened_sum(words_hypothesis, encoded_hypothesis)
        elif self._alignment_input in self.ERASURES:
            erasure = self.erasure()
            if self.training:
                erasure.update([encoded_premise, encoded_hypothesis], [premise_mask, hypothesis_mask])
            aligned_premise, aligned_hypothesis = erasure(encoded_premise, encoded_hypothesis)
        similarity_matrix = self._matrix_attention(self._attend_feedforward(aligned_premise),
                                                   self._attend_feedforward(aligned_hypothesis))
        # eq. 2 over the encoded words
        p2h_attention = masked_softmax(similarity_matrix, hypothesis_mask)
        attended_hypothesis = weighted_sum(encoded_hypothesis, p2h_attention)
        h2p_attention = masked_softmax(similarity_matrix.transpose(1, 2).contiguous(), premise_mask)
        attended_premise = weighted_sum(encoded_premise, h2p_attention)

        # eq. 3-5 as DecomposableAttention
        compared_premise = self._compare_feedforward(torch.cat([encoded_premise, attended_hypothesis], dim=-1))
        compared_premise = (compared_premise * premise_mask.unsqueeze(-1)).sum(dim=1)
        compared_hypothesis = self._compare_feedforward(torch.cat([encoded_hypothesis, attended_premise], dim=-1))
        compared_hypothesis = (compared_hypothesis * hypothesis_mask.unsqueeze(-1)).sum(dim=1)
        label_logits = self._aggregate_feedforward(torch.cat([compared_premise, compared_hypothesis], dim=-1))
        output_dict = {"label_logits": label_logits, "label_probs": torch.nn.functional.softmax(label_logits, dim=-1),
                       "h2p_attention": h2p_attention, "p2h_attention": p2h_attention}
        if label is not None:
            output_dict["loss"] = self._loss(label_logits, label.long().view(-1))
            self._accuracy(label_logits, label)
        if metadata is not None:
            output_dict["premise_tokens"] = [x["premise_tokens"] for x in metadata]
            output_dict["hypothesis_tokens"] = [x["hypothesis_tokens"] for x in metadata]
        return output_dict
