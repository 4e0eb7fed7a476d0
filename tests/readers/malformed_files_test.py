"""
Every memplugins reader (through the one `numbered_lines` helper) reads files as Windows editors save them, and
turns undecodable bytes, truncated gzip files and directories into `MalformedInputError` naming file and line.
"""
import gzip
import shutil
from pathlib import Path

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader

from memplugins.readers.errors import MalformedInputError

# (reader params, fixture; for parallel_text the fixture is the prefix of `.de` / `.en` files, the `.de` is mutated)
READERS = {
    "snli_parsed": ({"type": "snli_parsed"}, "fixtures/snli/tiny.jsonl"),
    "sst_trees": ({"type": "sst_trees"}, "fixtures/sst/dev_sample.txt"),
    "wikiqa": ({"type": "wikiqa"}, "fixtures/wikiqa/WikiQA-dev.sample.tsv"),
    "parallel_text": ({"type": "parallel_text"}, "fixtures/iwslt14/sample.de-en"),
    "hierarchical_documents": ({"type": "hierarchical_documents"}, "fixtures/yelp13_format/sample.ss"),
}


def read(name: str, path: str):
    params, _ = READERS[name]
    return list(DatasetReader.from_params(Params(dict(params))).read(path))


def mutated_copy(name: str, tmp_path: Path, mutate) -> str:
    """A copy of the reader's fixture whose (first) file's bytes are `mutate(bytes)`; returns the path to read."""
    _, fixture = READERS[name]
    if name == "parallel_text":
        shutil.copy(f"{fixture}.en", tmp_path / "data.en")
        (tmp_path / "data.de").write_bytes(mutate(Path(f"{fixture}.de").read_bytes()))
        return str(tmp_path / "data")
    target = tmp_path / "data"
    target.write_bytes(mutate(Path(fixture).read_bytes()))
    return str(target)


def assert_instances_or_a_named_error(name: str, path: str, folder: Path, attempt: int) -> None:
    """A mutated file reads to instances or raises a MalformedInputError naming a file under `folder` and its line;
    any other exception fails the test (the fuzz tests' one check)."""
    try:
        read(name, path)
    except MalformedInputError as error:
        assert error.file_path.startswith(str(folder)) and error.line_number >= 0
    except Exception as error:  # noqa: BLE001
        pytest.fail(f"{name}, mutation {attempt}: {type(error).__name__}: {str(error)[:300]}")


def fields(instances):
    return [str(instance) for instance in instances]


@pytest.mark.parametrize("name", READERS)
def test_bom_and_crlf_read_as_the_original(name, tmp_path):
    original = read(name, READERS[name][1])
    windows = mutated_copy(name, tmp_path, lambda data: b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"))
    assert fields(read(name, windows)) == fields(original)


@pytest.mark.parametrize("name", READERS)
def test_a_latin1_byte_names_file_and_line(name, tmp_path):
    def latin1_on_line_3(data: bytes) -> bytes:
        lines = data.split(b"\n")
        lines[2] = lines[2].replace(b"a", b"caf\xe9", 1)  # 'café' in Latin-1
        return b"\n".join(lines)

    path = mutated_copy(name, tmp_path, latin1_on_line_3)
    with pytest.raises(MalformedInputError, match=r":3: not UTF-8 text \(byte 0xe9"):
        read(name, path)


@pytest.mark.parametrize("name", READERS)
def test_a_truncated_gzip_file_names_the_last_line_read(name, tmp_path):
    path = mutated_copy(name, tmp_path, lambda data: gzip.compress(data)[: len(gzip.compress(data)) * 2 // 3])
    with pytest.raises(MalformedInputError, match=r"compressed file is truncated or corrupt after line \d+"):
        read(name, path)


@pytest.mark.parametrize("name", READERS)
def test_a_directory_is_named_as_such(name, tmp_path):
    (tmp_path / "data").mkdir()
    if name == "parallel_text":
        (tmp_path / "data.de").mkdir()
        (tmp_path / "data.en").mkdir()
    with pytest.raises(MalformedInputError, match="is a directory"):
        read(name, str(tmp_path / ("data" if name != "parallel_text" else "data")))
