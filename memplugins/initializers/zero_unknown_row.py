"""
A zero @@UNKNOWN@@ row for token embedding tables.

AllenNLP fills every vocabulary row that the pretrained file lacks, @@UNKNOWN@@ included, with a random draw from
the file's mean and deviation. With a vocabulary of the training words (and GloVe's, `glove_vocabulary.libsonnet`)
no training token maps to @@UNKNOWN@@, so that random row is never trained, yet every test or user word outside the
vocabulary meets it, and moves test accuracy by as much as another seed does. Zero is the neutral vector (GloVe's values are centred near
zero, and a standardised table's zero is GloVe's mean) and is what an L2 penalty on a tuned table drives an unused
row to anyway.

The row is never used in training, so zeroing it changes nothing else: the gradient of every row no batch reaches
is zero whatever the row holds, gradient clipping sees the same norm, and Adam's and AdaGrad's updates are
element-wise, so a model trained with this initializer equals the one trained without it in every parameter but
that row (`tests/initializers/zero_unknown_row_test.py` trains both). That is also why an archive trained before
the initializer can be brought to the same state afterwards: `zero_unknown_row_in_archive`.
"""
import json
import os
import re
import tarfile
import tempfile

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data.vocabulary import DEFAULT_OOV_TOKEN
from allennlp.nn.initializers import Initializer

from memplugins.archives import safe_extract

#: the token table of every shipped config (`text_field_embedder.token_embedders.tokens`)
TOKEN_TABLE = "_text_field_embedder.token_embedder_tokens.weight"
TOKEN_TABLE_REGEX = "^" + re.escape(TOKEN_TABLE) + "$"
#: AllenNLP's index of @@UNKNOWN@@ in a padded namespace (@@PADDING@@ is 0)
UNKNOWN_INDEX = 1


@Initializer.register("zero_unknown_row")
class ZeroUnknownRow(Initializer):
    """
    Sets row `index` (@@UNKNOWN@@ in a padded namespace such as `tokens`) of an embedding table to zero and leaves
    every other row as the embedder made it (pretrained vectors included). Apply it after the embedder is built,
    through a model's `initializer` regexes, e.g. (`training_config/zero_unknown_row.libsonnet`):

        initializer: { regexes: [['^_text_field_embedder\\\\.token_embedder_tokens\\\\.weight$',
                                   { type: 'zero_unknown_row' }]] }

    Registered as an `Initializer` with name "zero_unknown_row".

    # Parameters

    index : `int`, optional (default = `1`)
        The row to zero. AllenNLP's vocabulary gives @@UNKNOWN@@ index 1 in every padded namespace.
    """

    def __init__(self, index: int = UNKNOWN_INDEX) -> None:
        self.index = index

    def __call__(self, tensor: torch.Tensor, parameter_name: str = "", **kwargs) -> None:  # type: ignore
        if tensor.dim() != 2 or not 0 <= self.index < tensor.size(0):
            raise ConfigurationError(
                f"zero_unknown_row: {parameter_name or 'the parameter'} has shape {tuple(tensor.shape)}; it must be "
                f"an embedding table (rows by dimensions) with a row {self.index}"
            )
        with torch.no_grad():
            tensor[self.index].zero_()


def zero_unknown_row_in_archive(archive_file: str, output_file: str, parameter: str = TOKEN_TABLE) -> None:
    """
    Writes `archive_file` to `output_file` with the @@UNKNOWN@@ row of `parameter` zeroed and the `zero_unknown_row`
    initializer added to its config, i.e. the archive that training with the initializer gives (see the module
    docstring). The archive is opened as untrusted input: safe extraction, weights through torch's `weights_only`
    loader, and the vocabulary must hold @@UNKNOWN@@ at `UNKNOWN_INDEX`.
    """
    with tempfile.TemporaryDirectory() as directory:
        safe_extract(archive_file, directory)
        config_path = os.path.join(directory, "config.json")
        weights_path = os.path.join(directory, "weights.th")
        tokens_path = os.path.join(directory, "vocabulary", "tokens.txt")
        for path in (config_path, weights_path, tokens_path):
            if not os.path.isfile(path):
                raise ConfigurationError(f"{archive_file}: no {os.path.relpath(path, directory)} in the archive")
        with open(tokens_path, encoding="utf-8") as tokens:
            # a padded namespace's file omits @@PADDING@@ (index 0): its first line is index 1
            first = tokens.readline().rstrip("\n")
        if first != DEFAULT_OOV_TOKEN:
            raise ConfigurationError(f"{archive_file}: vocabulary/tokens.txt starts with {first!r}, not "
                                     f"{DEFAULT_OOV_TOKEN}; its unknown row is not row {UNKNOWN_INDEX}")
        weights = torch.load(weights_path, map_location="cpu", weights_only=True)
        if parameter not in weights:
            raise ConfigurationError(f"{archive_file}: the model has no parameter {parameter}")
        ZeroUnknownRow()(weights[parameter], parameter_name=parameter)
        torch.save(weights, weights_path)
        with open(config_path, encoding="utf-8") as config_file:
            config = json.load(config_file)
        initializer = config["model"].setdefault("initializer", {})
        regexes = initializer.setdefault("regexes", [])
        if not any(regex == TOKEN_TABLE_REGEX for regex, _ in regexes):
            regexes.insert(0, [TOKEN_TABLE_REGEX, {"type": "zero_unknown_row"}])
        with open(config_path, "w", encoding="utf-8") as config_file:
            json.dump(config, config_file, indent=4)
        with tarfile.open(output_file, "w:gz") as archive:
            for name in sorted(os.listdir(directory)):
                archive.add(os.path.join(directory, name), arcname=name)
