"""`max_tokens` (and the document reader's limits) truncate, and the number truncated is logged once per file."""
import json
import logging

import pytest

from allennlp.common import Params
from allennlp.data import DatasetReader


def _read(params: dict, path: str, caplog):
    reader = DatasetReader.from_params(Params(params))
    with caplog.at_level(logging.INFO):
        return list(reader.read(path)), caplog.text


def test_snli_parsed_truncates_both_sentences_and_logs_count(caplog):
    full, _ = _read({"type": "snli_parsed"}, "fixtures/snli/tiny.jsonl", caplog)
    cut, log = _read({"type": "snli_parsed", "max_tokens": 5}, "fixtures/snli/tiny.jsonl", caplog)
    assert len(cut) == len(full)
    expected = 0
    for whole, short in zip(full, cut):
        for field in ("premise", "hypothesis"):
            whole_tokens = [t.text for t in whole[field].tokens]
            assert [t.text for t in short[field].tokens] == whole_tokens[:5]
            expected += len(whole_tokens) > 5
        assert short["metadata"]["premise_tokens"] == [t.text for t in short["premise"].tokens]
    assert expected > 0
    assert f"truncated {expected} texts to max_tokens=5" in log


def test_snli_parsed_with_trees_skips_long_pairs(caplog):
    full, _ = _read({"type": "snli_parsed", "parse_trees": True}, "fixtures/snli/tiny.jsonl", caplog)
    kept, log = _read({"type": "snli_parsed", "parse_trees": True, "max_tokens": 10}, "fixtures/snli/tiny.jsonl", caplog)
    long = [i for i in full if max(len(i["premise"]), len(i["hypothesis"])) > 10]
    assert 0 < len(long) < len(full)
    assert len(kept) == len(full) - len(long)
    assert all(max(len(i["premise"]), len(i["hypothesis"])) <= 10 for i in kept)
    assert f"skipped {len(long)} parsed pairs longer than max_tokens=10" in log


def test_wikiqa_truncates_question_and_answer(caplog):
    cut, log = _read({"type": "wikiqa", "max_tokens": 4}, "fixtures/wikiqa/WikiQA-dev.sample.tsv", caplog)
    assert all(len(i["question"]) <= 4 and len(i["answer"]) <= 4 for i in cut)
    assert "texts to max_tokens=4" in log


def test_hierarchical_documents_counts_both_limits(caplog):
    params = {"type": "hierarchical_documents", "max_sentences": 2, "max_sentence_length": 3}
    cut, log = _read(params, "fixtures/yelp13_format/sample.ss", caplog)
    assert all(len(i["sentences"]) <= 2 for i in cut)
    assert all(len(sentence) <= 3 for i in cut for sentence in i["sentences"].field_list)
    assert "to max_sentences=2" in log and "to max_sentence_length=3" in log


def test_parallel_text_logs_seq2seq_truncation(caplog):
    params = {"type": "parallel_text", "source_max_tokens": 3, "target_max_tokens": 4}
    cut, log = _read(params, "fixtures/iwslt14/sample.de-en", caplog)
    assert all(len(i["source_tokens"]) <= 3 + 2 and len(i["target_tokens"]) <= 4 + 2 for i in cut)
    assert "source texts to source_max_tokens=3" in log and "target texts to target_max_tokens=4" in log


@pytest.mark.parametrize("config", ["snli_rte_word_by_word", "snli_mma_nse", "snli_lstmn_deep_fusion", "wikiqa_mma_nse_attention"])
def test_shipped_quadratic_configs_cut_a_pathological_line(config, tmp_path, caplog):
    """Issue 24: a 10,000-token pair through a shipped config is cut to the config's max_tokens, and counted."""
    from allennlp.common import Params
    from allennlp.data import DatasetReader

    from tests.conftest import REPO_ROOT

    params = Params.from_file(str(REPO_ROOT / "training_config" / f"{config}.jsonnet"))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    long = "word " * 10_000
    if config.startswith("wikiqa"):
        path = tmp_path / "long.txt"
        path.write_text(f"what is it ?\t{long}\t1\n")
    else:
        path = tmp_path / "long.jsonl"
        path.write_text(json.dumps({"gold_label": "neutral", "sentence1": long, "sentence2": "a word ."}) + "\n")
    with caplog.at_level("INFO"):
        instance, = reader.read(str(path))
    limit = reader._truncation.limit
    assert limit is not None and max(len(field) for field in instance.fields.values() if hasattr(field, "tokens")) == limit
    assert any("truncated 1" in record.getMessage() for record in caplog.records), [r.getMessage() for r in caplog.records]
