"""
memplugins: memory- and attention-augmented encoders and models for AllenNLP 2.10 on Python 3.11 / torch 2.

Importing the package applies the torch-2 compatibility fixes (`memplugins.compat`) and registers every
component with AllenNLP's registries.
"""
from memplugins import compat  # noqa: F401  (first: patches AllenNLP before anything else is registered)
from memplugins.tokenizers import SpacyBlankTokenizer  # noqa: F401
from memplugins.encoders import LstmnEncoder, NseEncoder  # noqa: F401
from memplugins.fields import BinaryTreeField  # noqa: F401
from memplugins.token_embedders import StandardizedEmbedding  # noqa: F401
from memplugins.readers import SnliParsedReader, WikiQaReader  # noqa: F401
from memplugins.metrics import MapMrr  # noqa: F401
from memplugins.models import RteAttention  # noqa: F401
from memplugins.predictors import EntailmentPairsPredictor  # noqa: F401
from memplugins.commands import AttentionMap  # noqa: F401
from memplugins.decoders import NseDecoderNet  # noqa: F401
from memplugins.training import DeadlineCallback  # noqa: F401
