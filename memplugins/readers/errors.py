import bz2
import gzip
import json
import lzma
import zlib
from typing import IO, Callable, Iterable, Iterator, Optional, Tuple


class MalformedInputError(ValueError):
    """Bad input data; the message starts with `file:line:` so the offending line can be found at once."""

    def __init__(self, file_path: str, line_number: int, reason: str) -> None:
        super().__init__(f"{file_path}:{line_number}: {reason}")
        self.file_path = file_path
        self.line_number = line_number
        self.reason = reason


def open_decompressed(file_path: str) -> IO[bytes]:
    """The file's bytes, decompressed when its first bytes are gzip's, bzip2's or xz's (not judged by the name)."""
    with open(file_path, "rb") as probe:
        magic = probe.read(10)
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(file_path, "rb")
    if magic[:3] == b"BZh" and magic[4:10] == b"1AY&SY":
        return bz2.open(file_path, "rb")
    if magic[:6] == b"\xfd7zXZ\x00":
        return lzma.open(file_path, "rb")
    return open(file_path, "rb")


def numbered_lines(file_path: str, display_name: Optional[str] = None) -> Iterator[Tuple[int, str]]:
    """
    Yields `(line_number, line)` of a UTF-8 text file (or gzip, bzip2 or xz of one), 1-based, for error messages
    that name the line (`display_name`, default `file_path`). The one reader of every memplugins dataset reader and
    of `allennlp predict`'s input, so that all treat files alike:

    * a UTF-8 byte-order mark (as Windows editors write) is dropped, and CRLF line ends read as LF;
    * bytes that are not UTF-8 (e.g. a Latin-1 or binary file), a truncated or corrupt compressed file (a
      half-copied download), and a path that is a directory raise `MalformedInputError` naming the file and the
      line (for a truncated archive: the last complete line read), never a bare `UnicodeDecodeError` / `EOFError` /
      `IsADirectoryError`.

    Lines are decoded one at a time, so a decoding error names the exact line.
    """
    name = display_name or file_path
    try:
        binary = open_decompressed(file_path)
    except IsADirectoryError:
        raise MalformedInputError(name, 0, "is a directory; give the path of a data file") from None
    with binary:
        yield from numbered_stream(binary, name)


def numbered_stream(binary: IO[bytes], name: str) -> Iterator[Tuple[int, str]]:
    """`numbered_lines` of an open binary stream (standard input, say)."""
    line_number = 0
    try:
        for line_number, raw in enumerate(binary, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise MalformedInputError(
                    name, line_number, f"not UTF-8 text (byte 0x{raw[error.start]:02x} at column "
                    f"{error.start + 1}); re-save the file as UTF-8"
                ) from None
            if line_number == 1 and line.startswith("\ufeff"):
                line = line[1:]
            if line.endswith("\r\n"):
                line = line[:-2] + "\n"
            yield line_number, line
    except IsADirectoryError:
        raise MalformedInputError(name, 0, "is a directory; give the path of a data file") from None
    except (EOFError, gzip.BadGzipFile, zlib.error, OSError, lzma.LZMAError) as error:
        raise MalformedInputError(
            name, line_number + 1, f"compressed file is truncated or corrupt after line {line_number} "
            f"({type(error).__name__}: {error}); the lines before were read. Copy or download the file again"
        ) from None


def json_type(value) -> str:
    """JSON's name for the type of a parsed value (for error messages)."""
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )


class LineError(ValueError):
    """What is wrong with one line, said in full; the caller adds the file and line (`MalformedInputError`)."""


def load_json_object(line: str) -> dict:
    """One line of a JSON-lines file as a JSON object, or a `LineError` saying what it is instead (our predictors'
    `load_line`)."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        raise LineError(f"not JSON: {error.msg} at column {error.colno}") from None
    except RecursionError:
        raise LineError("JSON nested too deeply to read") from None
    except ValueError as error:  # e.g. an integer of over 4,300 digits
        raise LineError(f"not JSON that can be read: {error}") from None
    if not isinstance(value, dict):
        raise LineError(f"expected a JSON object, got a JSON {json_type(value)}")
    return value


def parse_json_object(line: str, file_path: str, line_number: int) -> dict:
    """One line of a JSON-lines file as a JSON object, or a `MalformedInputError` saying what it is instead."""
    try:
        return load_json_object(line)
    except LineError as error:
        raise MalformedInputError(file_path, line_number, str(error)) from None


def text_problem(value, allow_empty: bool = False) -> Optional[str]:
    """Why `value` is not usable text (None if it is): not a string, empty, or not encodable (an unpaired UTF-16
    surrogate such as JSON's "\\ud800", which no tokenizer or output file can take)."""
    if not isinstance(value, str):
        return f"must be a string, got a JSON {json_type(value)}"
    if not allow_empty and not value.strip():
        return "is empty"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"contains an unpaired surrogate ({value[error.start]!a} at character {error.start + 1})"
    return None


def require_text(value, file_path: str, line_number: int, key: str, allow_empty: bool = False) -> str:
    problem = text_problem(value, allow_empty)
    if problem:
        raise MalformedInputError(file_path, line_number, f"{key!r} {problem}")
    return value


def no_instances_error(file_path: str, reader: str, skipped: str = "") -> MalformedInputError:
    """An empty data file is an error: evaluating on it would report 0.0 for every metric."""
    reason = f"{reader}: no instances in this file" + (f" ({skipped})" if skipped else "")
    return MalformedInputError(file_path, 0, reason)


def nonempty(items: Iterable, file_path: str, reader: str, skipped: Callable[[], str] = lambda: "") -> Iterator:
    """`items`, then a `no_instances_error` if there were none (`skipped()` says what was left out, if anything)."""
    count = 0
    for item in items:
        count += 1
        yield item
    if not count:
        raise no_instances_error(file_path, reader, skipped())
