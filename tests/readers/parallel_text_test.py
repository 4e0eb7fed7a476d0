import pytest

from memplugins.readers import MalformedInputError, ParallelTextReader


def write_pair(tmp_path, source_lines, target_lines):
    (tmp_path / "c.en").write_text("".join(line + "\n" for line in source_lines))
    (tmp_path / "c.de").write_text("".join(line + "\n" for line in target_lines))
    return str(tmp_path / "c")


def test_reads_aligned_lines_with_start_and_end_on_the_target(tmp_path):
    prefix = write_pair(tmp_path, ["Hello world .", "a b"], ["Hallo Welt .", "x y"])
    instances = list(ParallelTextReader(lowercase=True, source_add_start_token=False,
                                        source_add_end_token=False).read(prefix))
    assert [t.text for t in instances[0]["source_tokens"].tokens] == ["hello", "world", "."]
    assert [t.text for t in instances[0]["target_tokens"].tokens] == ["@start@", "hallo", "welt", ".", "@end@"]
    assert len(instances) == 2


def test_max_length_drops_pairs_with_a_long_side(tmp_path):
    prefix = write_pair(tmp_path, ["a b c", "a", "a b"], ["x", "x y z w", "x y"])
    assert len(list(ParallelTextReader(max_length=2).read(prefix))) == 1


@pytest.mark.parametrize(
    "source, target, where",
    [(["a", "b", "c"], ["x", "y"], r"c\.de:3: .*same number of lines"),
     (["a"], ["x", "y"], r"c\.en:2: .*same number of lines"),
     (["a", "", "c"], ["x", "y", "z"], r"c\.en:2: empty line"),
     (["a", "b"], ["x", "  "], r"c\.de:2: empty line")],
)
def test_misaligned_or_empty_lines_name_file_and_line(tmp_path, source, target, where):
    prefix = write_pair(tmp_path, source, target)
    with pytest.raises(MalformedInputError, match=where):
        list(ParallelTextReader().read(prefix))


def test_the_shipped_sample_reads():
    assert len(list(ParallelTextReader(max_length=25).read("fixtures/iwslt14/sample.de-en"))) > 200
