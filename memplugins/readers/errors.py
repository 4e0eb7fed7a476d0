import gzip
from typing import IO, Iterator, Tuple


class MalformedInputError(ValueError):
    """Bad input data; the message starts with `file:line:` so the offending line can be found at once."""

    def __init__(self, file_path: str, line_number: int, reason: str) -> None:
        super().__init__(f"{file_path}:{line_number}: {reason}")
        self.file_path = file_path
        self.line_number = line_number
        self.reason = reason


def open_text(file_path: str) -> IO[str]:
    """Opens a UTF-8 text file, transparently decompressing gzip (detected by its magic bytes, not the name)."""
    with open(file_path, "rb") as probe:
        is_gzip = probe.read(2) == b"\x1f\x8b"
    if is_gzip:
        return gzip.open(file_path, "rt", encoding="utf-8")
    return open(file_path, "r", encoding="utf-8")


def numbered_lines(file_path: str) -> Iterator[Tuple[int, str]]:
    """Yields `(line_number, line)` with 1-based line numbers, for error messages that name the line."""
    with open_text(file_path) as text_file:
        for line_number, line in enumerate(text_file, start=1):
            yield line_number, line
