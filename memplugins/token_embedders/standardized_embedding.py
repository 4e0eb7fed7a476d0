import logging
from typing import Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.modules.token_embedders import Embedding, TokenEmbedder

logger = logging.getLogger(__name__)


@TokenEmbedder.register("standardized_embedding")
class StandardizedEmbedding(Embedding):
    """
    AllenNLP's `embedding` whose vectors are standardised once, when it is built: every dimension is shifted and
    scaled to mean 0 and standard deviation 1 over the vocabulary's rows (the padding row, if any, stays 0). IRAM
    (Tutek and Šnajder 2018, section 4.2) "follow[s] the recommendation of Mu et al. (2017) and standardize[s] the
    embeddings"; we read "standardize" literally (Mu et al.'s own post-processing also removes the top principal
    components, which IRAM does not mention). With pretrained vectors the statistics are those of the vocabulary's
    rows (AllenNLP fills words missing from the file from a normal with the file's mean and std, so they barely
    move the statistics). Built from an archive, the saved (already standardised) weights replace the result.

    The statistics are kept (buffers `standardization_mean` and `_std`, saved with the weights), so that rows added
    later by `extend_vocab` (`allennlp evaluate --extend-vocab`, fine-tuning on new data) are standardised as the
    built rows were; `Embedding.extend_vocab` alone would append raw GloVe rows, about 2.5x the standardised ones'
    scale and off-centre. Archives saved before the statistics were kept recover them from the extension file: per
    dimension, the affine map that takes the file's rows of the words already in the vocabulary to their stored
    rows (a least-squares fit, exact while the table is fixed, as IRAM's configs keep it).

    Registered as a `TokenEmbedder` with name "standardized_embedding"; it takes `embedding`'s parameters.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        with torch.no_grad():
            keep = self._counted_rows(self.weight.size(0))
            rows = self.weight[keep]
            mean, std = rows.mean(0), rows.std(0).clamp_min(1e-6)
            self.weight[keep] = (rows - mean) / std
        self.register_buffer("standardization_mean", mean)
        self.register_buffer("standardization_std", std)

    def _counted_rows(self, size: int) -> torch.Tensor:
        keep = torch.ones(size, dtype=torch.bool)
        if self.padding_index is not None and self.padding_index < size:
            keep[self.padding_index] = False
        return keep

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # an archive from before the statistics were saved: they are unknown (NaN) until `extend_vocab` needs them
        for name in ("standardization_mean", "standardization_std"):
            state_dict.setdefault(prefix + name, torch.full_like(getattr(self, name), float("nan")))
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def extend_vocab(
        self,
        extended_vocab: Vocabulary,
        vocab_namespace: str = None,
        extension_pretrained_file: str = None,
        model_path: str = None,
    ):
        old_size = self.num_embeddings
        super().extend_vocab(extended_vocab, vocab_namespace, extension_pretrained_file, model_path)
        if self.num_embeddings == old_size:
            return
        namespace = vocab_namespace or self._vocab_namespace
        if torch.isnan(self.standardization_mean).any():
            self._recover_statistics(extended_vocab, namespace, old_size, extension_pretrained_file or self._pretrained_file)
        with torch.no_grad():
            new = self.weight[old_size:]
            self.weight[old_size:] = (new - self.standardization_mean) / self.standardization_std

    def _recover_statistics(self, vocab: Vocabulary, namespace: str, old_size: int, pretrained: Optional[str]) -> None:
        """mean and std such that (file row - mean) / std is the stored row, fitted over the old words in the file."""
        # imported here as AllenNLP's vocabulary module does, to avoid its import cycle
        from allennlp.data.vocabulary import _read_pretrained_tokens
        from allennlp.modules.token_embedders.embedding import _read_pretrained_embeddings_file

        if not pretrained:
            raise ConfigurationError(f"{self.__class__.__name__} at {namespace}: this archive predates the saved "
                                     "standardisation statistics; pass the pretrained file to recover them")
        in_file = set(_read_pretrained_tokens(pretrained))
        words = [vocab.get_token_from_index(i, namespace) for i in range(old_size)]
        old = [i for i, word in enumerate(words) if word in in_file and i != self.padding_index]
        if len(old) < 2:
            raise ConfigurationError(f"{self.__class__.__name__}: fewer than two of the vocabulary's words are in "
                                     f"{pretrained}; the standardisation statistics cannot be recovered")
        raw = _read_pretrained_embeddings_file(pretrained, self.weight.size(1), vocab, namespace)[old]
        stored = self.weight.detach()[old]
        # stored = (raw - mean) / std per dimension: a line through (raw, stored), slope 1/std, intercept -mean/std
        raw_centred, stored_centred = raw - raw.mean(0), stored - stored.mean(0)
        slope = (raw_centred * stored_centred).sum(0) / (raw_centred ** 2).sum(0)
        residual = (stored_centred - slope * raw_centred).abs().max().item()
        if residual > 1e-3:
            logger.warning("%s: the stored rows are not an affine map of %s (largest residual %.3g: the table was "
                           "trained); new rows are standardised with a least-squares fit", self.__class__.__name__,
                           pretrained, residual)
        std = 1 / slope
        self.standardization_std.copy_(std)
        self.standardization_mean.copy_(raw.mean(0) - stored.mean(0) * std)
