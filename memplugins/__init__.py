"""
memplugins: memory- and attention-augmented encoders and models for AllenNLP 2.10 on Python 3.11-3.13 / torch 2.

Importing the package quiets the deprecation warnings third-party modules raise while they are imported, applies
the torch-2 compatibility fixes (`memplugins.compat`), the exact-resume feature (`memplugins.training.exact_resume`),
safe archive loading (`memplugins.archives`), flushing denormal floats to zero on the CPU
(`memplugins.training.flush_denormal`; `MEMPLUGINS_FLUSH_DENORMAL=0` keeps them) and moving batches to their device
without a call per metadata string (`memplugins.data_loaders.device_move`); makes `nltk.download` a logged no-op
(nothing downloads at run time); and registers every component with AllenNLP's registries.
"""
from memplugins.cli import keep_nltk_offline, quiet_third_party_imports

quiet_third_party_imports()
# `Predictor.from_path` imports every allennlp-models module, one of which calls `nltk.download` (offline: a printed
# "[nltk_data] Error loading punkt"); no memplugins code needs those resources
keep_nltk_offline()

from memplugins import compat  # noqa: E402  (before anything registers: the fixes patch AllenNLP)
from memplugins import archives  # noqa: E402
from memplugins.training import exact_resume, flush_denormal  # noqa: E402
from memplugins.data_loaders import device_move  # noqa: E402

compat.apply()
exact_resume.apply()
archives.apply()
flush_denormal.apply()
device_move.apply()

from memplugins.tokenizers import SpacyBlankTokenizer  # noqa: E402,F401
from memplugins.encoders import LstmnEncoder, NseEncoder  # noqa: E402,F401
from memplugins.fields import BinaryTreeField  # noqa: E402,F401
from memplugins.token_embedders import StandardizedEmbedding  # noqa: E402,F401
from memplugins.initializers import ZeroUnknownRow  # noqa: E402,F401
from memplugins.readers import SnliParsedReader, WikiQaReader, unseen_labels  # noqa: E402,F401
from memplugins.metrics import MapMrr  # noqa: E402,F401
from memplugins.models import RteAttention  # noqa: E402,F401
from memplugins.predictors import EntailmentPairsPredictor, checked_inputs, input_lines, seq2seq_labels  # noqa: E402,F401
from memplugins.commands import AttentionMap, empty_evaluation  # noqa: E402,F401
from memplugins.decoders import NseDecoderNet  # noqa: E402,F401
from memplugins.training import DeadlineCallback  # noqa: E402,F401
from memplugins.data_loaders import TensorizedDataLoader  # noqa: E402,F401

unseen_labels.apply()
input_lines.apply()
checked_inputs.apply()
seq2seq_labels.apply()
empty_evaluation.apply()
