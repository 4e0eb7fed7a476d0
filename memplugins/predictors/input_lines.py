"""
`allennlp predict` names the input line of a bad input. AllenNLP's `_PredictManager` reads the input file as text
and hands each line to the predictor's `load_line`: a file that is not UTF-8 is a bare `UnicodeDecodeError`, a
truncated `.gz` an `EOFError`, a line that `load_line` cannot parse a `JSONDecodeError` (or `ValueError` for a number
of over 4,300 digits, `RecursionError` for deep nesting), and an input the predictor cannot take an error that does
not say which line it was.

Here the file is read through `readers.errors.numbered_lines` (each line decoded on its own; gzip, bzip2 and xz
recognised by their first bytes, as well as by AllenNLP's file endings), each non-blank line still goes to the
predictor's own `load_line` (so a predictor that reads another line format keeps it), and every failure of reading,
parsing or predicting becomes a `MalformedInputError` naming the file and line (the batch's lines for
`--batch-size` above 1), with the original error chained. Test: `tests/predictors/input_lines_test.py`.
"""
import io
import json
import sys
from typing import Iterator, List

from allennlp.commands.predict import _PredictManager
from allennlp.common.file_utils import cached_path
from allennlp.common.util import JsonDict

from memplugins.compat.patching import patch
from memplugins.readers.errors import LineError, MalformedInputError, numbered_lines, numbered_stream


def describe_parse_error(error: Exception) -> str:
    """What a `load_line` failure means, in one line."""
    if isinstance(error, LineError):
        return str(error)
    if isinstance(error, json.JSONDecodeError):
        return f"not JSON: {error.msg} at column {error.colno}"
    if isinstance(error, RecursionError):
        return "JSON nested too deeply to read"
    return f"could not read this line ({type(error).__name__}: {error})"


def _numbered_json(original):
    def _get_json_data(self) -> Iterator[JsonDict]:
        name = "<stdin>" if self._input_file == "-" else self._input_file
        self._memplugins_lines: List[int] = []
        if self._input_file == "-":
            lines = numbered_stream(getattr(sys.stdin, "buffer", None) or io.BytesIO(sys.stdin.read().encode()), name)
        else:
            lines = numbered_lines(cached_path(self._input_file), display_name=name)
        for number, line in lines:
            if not line or line.isspace():
                continue
            self._memplugins_lines.append(number)
            self._memplugins_lines = self._memplugins_lines[-self._batch_size :]
            try:
                yield self._predictor.load_line(line)
            except MalformedInputError:
                raise
            except (ValueError, RecursionError, TypeError, KeyError) as error:
                raise MalformedInputError(name, number, describe_parse_error(error)) from error

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


def apply() -> None:
    patch(_PredictManager, "_get_json_data", _numbered_json)
    patch(_PredictManager, "_predict_json", _predict_json_naming_lines)
