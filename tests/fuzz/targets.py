"""
What the fuzz tests feed and what they accept (issue 93, item 4). One entry per reader the shipped configs use and
per predictor input they take; each pairs a Hypothesis strategy with a check whose only allowed outcomes are a
valid result (instances that batch into tensors, a prediction JSON can write without NaN), a counted skip, or the
error that names the problem (`MalformedInputError` for data; `InvalidInputError`, `LineError` or
`MalformedInputError` for a prediction input). Any other exception fails.
"""
import functools
import json
import shutil
from pathlib import Path
from typing import Callable, Dict, NamedTuple

from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.predictors import Predictor
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from memplugins.predictors.inputs import InvalidInputError
from memplugins.readers.errors import MalformedInputError
from tests.config_models import REPO_ROOT, build_config_model
from tests.fuzz.strategies import damaged_file, field_line, json_line, tree_line

COUNTS: Dict[str, int] = {}


class Target(NamedTuple):
    strategy: st.SearchStrategy
    check: Callable[[object, Path], None]


def _lines(path: str) -> list:
    return (REPO_ROOT / path).read_text(encoding="utf-8").splitlines()


def _reader_check(params: dict, parallel: bool = False):
    def check(data: bytes, folder: Path) -> None:
        path = folder / "data"
        if parallel:
            shutil.copy(REPO_ROOT / "fixtures/iwslt14/sample.de-en.en", folder / "data.en")
            (folder / "data.de").write_bytes(data)
        else:
            path.write_bytes(data)
        reader = DatasetReader.from_params(Params(json.loads(json.dumps(params))))
        try:
            instances = list(reader.read(str(path)))
        except MalformedInputError as error:
            assert error.file_path.startswith(str(folder)) and error.line_number >= 0, str(error)
            return
        batch = Batch(instances[:8])  # what the instances are for: indexed and padded into tensors
        batch.index_instances(Vocabulary.from_instances(instances[:8]))
        batch.as_tensor_dict()

    return check


READERS: Dict[str, Target] = {
    "snli_parsed": Target(damaged_file(_lines("fixtures/snli/tiny.jsonl")[:6], json_line(
        json.loads(_lines("fixtures/snli/tiny.jsonl")[1]))), _reader_check(
        {"type": "snli_parsed", "tokenizer": {"type": "spacy_blank"}})),
    "snli_parsed (parse_trees)": Target(damaged_file(_lines("fixtures/snli/tiny.jsonl")[:6], json_line(
        json.loads(_lines("fixtures/snli/tiny.jsonl")[1]))), _reader_check(
        {"type": "snli_parsed", "parse_trees": True, "max_tokens": 200})),
    "sst_trees": Target(damaged_file(_lines("fixtures/sst/dev_sample.txt")[:6], tree_line(
        _lines("fixtures/sst/dev_sample.txt")[0])), _reader_check({"type": "sst_trees", "max_tokens": 200})),
    "checked_sst_tokens": Target(damaged_file(_lines("fixtures/sst/dev_sample.txt")[:6], tree_line(
        _lines("fixtures/sst/dev_sample.txt")[3])), _reader_check({"type": "checked_sst_tokens", "use_subtrees": True})),
    "wikiqa (.tsv)": Target(damaged_file(_lines("fixtures/wikiqa/WikiQA-dev.sample.tsv")[:8], field_line(
        _lines("fixtures/wikiqa/WikiQA-dev.sample.tsv")[1], "\t"), keep_first=1), _reader_check(
        {"type": "wikiqa", "max_tokens": 400})),
    "wikiqa (.txt)": Target(damaged_file(_lines("fixtures/wikiqa/WikiQA-train.sample.txt")[:6], field_line(
        _lines("fixtures/wikiqa/WikiQA-train.sample.txt")[0], "\t")), _reader_check({"type": "wikiqa"})),
    "parallel_text": Target(damaged_file(_lines("fixtures/iwslt14/sample.de-en.de")[:6], field_line(
        _lines("fixtures/iwslt14/sample.de-en.de")[0], " ")), _reader_check({"type": "parallel_text"}, parallel=True)),
    "hierarchical_documents": Target(damaged_file(_lines("fixtures/yelp13_format/sample.ss")[:6], field_line(
        _lines("fixtures/yelp13_format/sample.ss")[0], "\t\t")), _reader_check(
        {"type": "hierarchical_documents", "max_sentences": 20, "max_sentence_length": 50})),
    "checked_simple_language_modeling": Target(damaged_file(_lines("fixtures/ptb_format/train.txt")[:6], field_line(
        _lines("fixtures/ptb_format/train.txt")[0], " ")), _reader_check(
        {"type": "checked_simple_language_modeling", "tokenizer": {"type": "whitespace"},
         "start_tokens": ["<S>"], "end_tokens": ["</S>"]})),
}


@functools.lru_cache(maxsize=None)
def predictor_for(config: str) -> Predictor:
    """The config's default predictor over its model built on fixture data (untrained: inputs are the point)."""
    built = build_config_model(config, num_instances=4)
    params = Params.from_file(str(REPO_ROOT / config))
    reader_params = params.get("validation_dataset_reader", None) or params["dataset_reader"]
    reader = DatasetReader.from_params(Params(reader_params.as_dict() if hasattr(reader_params, "as_dict")
                                              else reader_params))
    return Predictor.by_name(built.model.default_predictor)(built.model.eval(), reader)


def _predictor_check(config: str):
    def check(line: str, folder: Path) -> None:
        predictor = predictor_for(config)
        try:  # what `allennlp predict` turns into a `MalformedInputError` naming the line (input_lines)
            inputs = predictor.load_line(line)
        except (ValueError, RecursionError):  # LineError, or json.loads' errors (allennlp-models' predictors)
            return
        try:
            output = predictor.predict_json(inputs)
        except (InvalidInputError, MalformedInputError):
            return
        json.dumps(output, allow_nan=False)  # what `allennlp predict` writes, without NaN

    return check


PREDICTOR_INPUTS = {  # config: a good input
    "snli_rte_conditional": {"premise": "A man plays a guitar.", "hypothesis": "A person plays music."},
    "snli_mma_nse": {"premise": "A man plays a guitar.", "hypothesis": "A person plays music."},
    "snli_tree_lstm": {"sentence1": "A man plays.", "sentence2": "A person plays.",
                       "sentence1_binary_parse": "( ( A man ) plays )", "sentence2_binary_parse": "( ( A person ) plays )"},
    "wikiqa_mma_nse_attention": {"question": "how are glacier caves formed ?", "answers": ["A cave .", "It is high ."]},
    "yelp13_nse_lstm": {"text": "the food was great . <sssss> service was slow ."},
    "ptb_lstmn_lm": {"sentence": "the cat sat on the mat"},
    "sst2_tree_lstm": {"sentence": "a lovely film ."},
    "sst2_iram_full": {"sentence": "a lovely film ."},
    "sst_lstmn": {"sentence": "a lovely film ."},
    "iwslt14_nse_lstm": {"source": "wir reden über das wetter ."},
}
PREDICTORS: Dict[str, Target] = {
    name: Target(json_line(good), _predictor_check(f"training_config/{name}.jsonnet"))
    for name, good in PREDICTOR_INPUTS.items()
}
TARGETS = {**{f"reader {name}": target for name, target in READERS.items()},
           **{f"predictor {name}": target for name, target in PREDICTORS.items()}}


def fuzz(name: str, folder: Path, max_examples: int, random_seed=None) -> None:
    """Runs `TARGETS[name]` for `max_examples` examples: derandomized (the same examples every run) unless
    `random_seed` is given. Counts examples in `COUNTS`."""
    target = TARGETS[name]

    @settings(max_examples=max_examples, derandomize=random_seed is None, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate, Phase.shrink])
    @given(target.strategy)
    def property_(example):
        COUNTS[name] = COUNTS.get(name, 0) + 1
        target.check(example, folder)

    if random_seed is not None:
        property_ = seed(random_seed)(property_)
    property_()
