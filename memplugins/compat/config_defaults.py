"""
Defaults for the `std.extVar` variables of our shipped configs, which jsonnet cannot express: jsonnet has no
"extVar with a default", and AllenNLP passes exactly the environment as ext vars, so an unset variable is an error.
AllenNLP's `_environment_variables` is wrapped so that each documented variable below falls back to the small real
sample that the repository ships under `fixtures/`; a variable set in the environment always wins. The sample paths
are made absolute against the checkout that holds this package (an editable install or a clone) or, for a wheel
install, `<prefix>/share/memplugins` (where setup.py installs the fixtures; `memplugins.cli.data_roots`), so the
configs run from any working directory. Test: `tests/compat/config_defaults_test.py`.
"""
from allennlp.common import params

from memplugins.cli import data_roots

from memplugins.compat.patching import patch

CONFIG_DEFAULTS = {
    "SNLI_TRAIN": "fixtures/snli/snli_1.0_dev_sample_train.jsonl",
    "SNLI_VALIDATION": "fixtures/snli/snli_1.0_dev_sample_validation.jsonl",
    "GLOVE_PATH": "fixtures/glove/glove.6B.50d.snli_sample.txt.gz",
    "EMBEDDING_DIM": "50",
    "GLOVE_VOCABULARY": "100000",
    "PTB_TRAIN": "fixtures/ptb_format/train.txt",
    "PTB_VALIDATION": "fixtures/ptb_format/valid.txt",
    "SST_TRAIN": "fixtures/sst/dev_sample.txt",
    "SST_VALIDATION": "fixtures/sst/dev_sample.txt",
    "SST_GRANULARITY": "5-class",
    "WIKIQA_TRAIN": "fixtures/wikiqa/WikiQA-train.sample.txt",
    "WIKIQA_VALIDATION": "fixtures/wikiqa/WikiQA-dev.sample.tsv",
    "LSTMN_LAYERS": "1",
    "LM_DROPOUT": "0.5",
    "IRAM_PENALTY": "0.0003",
    "IWSLT_TRAIN": "fixtures/iwslt14/sample.de-en",
    "IWSLT_VALIDATION": "fixtures/iwslt14/sample.de-en",
    "BEAM_SIZE": "1",
    "YELP_TRAIN": "fixtures/yelp13_format/sample.ss",
    "YELP_VALIDATION": "fixtures/yelp13_format/sample.ss",
    "NUM_EPOCHS": "10",
    "CUDA_DEVICE": "-1",
}

_ROOTS = [root for root in data_roots() if (root / "fixtures").is_dir()]
if _ROOTS:
    CONFIG_DEFAULTS = {
        name: str(_ROOTS[0] / value) if value.startswith("fixtures/") else value for name, value in CONFIG_DEFAULTS.items()
    }


def _with_defaults(original):
    def environment_variables():
        return {**CONFIG_DEFAULTS, **original()}

    return environment_variables


def apply() -> None:
    patch(params, "_environment_variables", _with_defaults)
