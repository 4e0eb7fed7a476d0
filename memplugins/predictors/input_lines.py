"""
`allennlp predict` names the input line of a bad input. AllenNLP's `_PredictManager` parses each line with
`json.loads` and hands the result on: a non-JSON line is a bare `JSONDecodeError`, a JSON array an
`AttributeError`, and an input the predictor cannot take an error that does not say which line it was. Here every
line is parsed with `readers.errors.parse_json_object` (not JSON, nested too deeply, not an object: each named
`file:line`), and an error while predicting a batch becomes a `MalformedInputError` naming the line (the batch's
lines, for `--batch-size` above 1), with the original error chained. Test: `tests/predictors/input_lines_test.py`.
"""
import sys
from typing import Iterator, List

from allennlp.commands.predict import _PredictManager
from allennlp.common.file_utils import cached_path, open_compressed
from allennlp.common.util import JsonDict

from memplugins.compat.patching import patch
from memplugins.readers.errors import MalformedInputError, parse_json_object


def _numbered_json(original):
    def _get_json_data(self) -> Iterator[JsonDict]:
        name = "<stdin>" if self._input_file == "-" else self._input_file
        self._memplugins_lines: List[int] = []
        with (open_compressed(cached_path(self._input_file)) if self._input_file != "-" else _Stdin()) as lines:
            for number, line in enumerate(lines, start=1):
                if line.isspace() or not line:
                    continue
                self._memplugins_lines.append(number)
                self._memplugins_lines = self._memplugins_lines[-self._batch_size :]
                yield parse_json_object(line, name, number)

    return _get_json_data


def _predict_json_naming_lines(original):
    def _predict_json(self, batch_data: List[JsonDict]) -> Iterator[str]:
        try:
            return iter(list(original(self, batch_data)))  # (a generator: run it here, where the lines are known)
        except MalformedInputError:
            raise
        except Exception as error:  # noqa: BLE001  (chained below: nothing is hidden)
            lines = getattr(self, "_memplugins_lines", [])[-len(batch_data):] or [0]
            which = "this input" if len(lines) == 1 else f"the batch of lines {lines[0]}-{lines[-1]}"
            name = "<stdin>" if self._input_file == "-" else self._input_file
            raise MalformedInputError(name, lines[0], f"could not predict {which}: {error}") from error

    return _predict_json


class _Stdin:
    def __enter__(self):
        return sys.stdin

    def __exit__(self, *exc) -> None:
        return None


def apply() -> None:
    patch(_PredictManager, "_get_json_data", _numbered_json)
    patch(_PredictManager, "_predict_json", _predict_json_naming_lines)
