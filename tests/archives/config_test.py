"""
An archive's `config.json` (`memplugins.archives.config`): read as JSON with comments and trailing commas, never
evaluated, nesting capped; checked once, when the archive is opened, for an import path in any `type` at any depth,
so that nothing a command builds later from `archive.config` can name one. Each refusal is an `ArchiveError` naming
the archive's member and the key path, with the opt-in.
"""
import json
import re

import pytest
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from memplugins.archives import ArchiveError, MAX_DEPTH, check_registered_types
from memplugins.archives.config import parse_archive_config, strip_json_liberties
from tests.archives.crafting import members_of, replaced, set_path, with_config, write_archive

# every place an AllenNLP command builds a registered type from an archive's config
KEYS = ["dataset_reader", "validation_dataset_reader", "model", "model.text_field_embedder",
        "model.text_field_embedder.token_embedders.tokens", "data_loader", "data_loader.batch_sampler",
        "validation_data_loader", "validation_data_loader.batch_sampler", "evaluation", "trainer",
        "trainer.callbacks[0]", "trainer.optimizer", "trainer.learning_rate_scheduler", "vocabulary",
        "dataset_reader.tokenizer", "dataset_reader.token_indexers.tokens", "model.initializer.regexes"]


@pytest.mark.parametrize("text, expected", [
    ('{"a": 1,}', {"a": 1}),
    ('{"a": [1, 2,\n],\n}', {"a": [1, 2]}),
    ('// header\n{"a": 1, # comment\n "b": "x // not a comment, # nor this, /* nor this */",\n}',
     {"a": 1, "b": "x // not a comment, # nor this, /* nor this */"}),
    ('{"a": /* inline */ 1, /* trailing */ }', {"a": 1}),
    ('{"a": "quote \\" , }", "b": [],}', {"a": 'quote " , }', "b": []}),
])
def test_comments_and_trailing_commas_read_as_allennlp_reads_them(text, expected):
    assert parse_archive_config(text, "config.json") == expected


@pytest.mark.parametrize("text, message", [
    ('{"a": importstr "/etc/passwd"}', "config.json:1: an archive's config must be JSON"),
    ('{"home": std.extVar("HOME")}', "must be JSON .* not evaluated as jsonnet"),
    ('local x = 1; {"a": x}', "must be JSON"),
    ("[" * 100_000 + "]" * 100_000, f"nested more than {MAX_DEPTH} deep"),
    ('{"n": ' + "9" * 5000 + "}", "must be JSON .*4300"),
    ('{"a": 1} /* never closed', "a /\\* comment is never closed"),
    ("[1, 2]", "must be a JSON object, got list"),
    ('{\n"a": 1\n"b": 2}', "config.json:3: .*Expecting ',' delimiter"),
])
def test_what_is_not_json_is_a_clear_error(text, message):
    with pytest.raises(ArchiveError, match=message):
        parse_archive_config(text, "config.json")


def test_the_scan_is_linear():
    """A megabyte of config is read at once (a quadratic scan would take minutes)."""
    text = json.dumps({f"key{i}": ["value, with // and # and /*", i] for i in range(30_000)})
    assert len(strip_json_liberties(text, "config.json")) == len(text)


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("path", ["os.system", "subprocess.call", "builtins.exec"])
def test_an_import_path_at_any_key_is_refused(key, path):
    config = set_path({"model": {"type": "rte_attention"}}, key, {"type": path, "command": "touch marker"})
    with pytest.raises(ArchiveError, match=re.escape(f"{key}.type is '{path}', an import path") +
                       ".*--allow-import-paths.*MEMPLUGINS_ALLOW_IMPORT_PATHS=1"):
        check_registered_types(config, "config.json")


def test_a_list_position_is_named():
    config = {"trainer": {"callbacks": [{"type": "tensorboard"}, {"type": "os.system"}]}}
    with pytest.raises(ArchiveError, match=r"trainer\.callbacks\[1\]\.type is 'os.system'"):
        check_registered_types(config, "config.json")


@pytest.mark.parametrize("language", ["/tmp/pipeline", "../pipeline", "os", "en_core_web_sm/../../x"])
def test_a_spacy_language_that_is_a_path_is_refused(language):
    config = {"dataset_reader": {"tokenizer": {"type": "spacy", "language": language}}}
    if language == "os":  # a two- or three-letter name is a language code, as spaCy reads it
        check_registered_types(config, "config.json")
        return
    with pytest.raises(ArchiveError, match="dataset_reader.tokenizer.language .* not a spaCy model name"):
        check_registered_types(config, "config.json")


def test_registered_names_and_model_names_pass():
    config = {"dataset_reader": {"type": "snli_parsed", "tokenizer": {"type": "spacy", "language": "en_core_web_sm"}},
              "model": {"type": "rte_attention"}, "data_loader": {"batch_sampler": {"type": "bucket"}},
              "trainer": {"callbacks": [{"type": "tensorboard"}], "optimizer": {"type": "adam"}}}
    check_registered_types(config, "config.json")


def test_a_trailing_comma_archive_loads_and_predicts(good_archive, sandbox):
    """As AllenNLP-era archives were written (allennlp-models' own `lm/language_model/model.tar.gz` has one)."""
    members = with_config(members_of(good_archive), lambda config: (
        "// written by hand\n" + json.dumps(config, indent=2)[:-2] + ",\n  # a comment\n}\n"))
    archive = write_archive(sandbox / "trailing.tar.gz", members)
    predictor = Predictor.from_path(str(archive))
    assert set(predictor.predict_json({"premise": "A man plays.", "hypothesis": "A person plays."})["label_probs"])


def test_a_refusal_names_the_archive_member_not_the_extraction_folder(good_archive, sandbox):
    members = with_config(members_of(good_archive), lambda config: set_path(config, "evaluation.type", "os.system"))
    archive = write_archive(sandbox / "evil.tar.gz", members)
    with pytest.raises(ArchiveError, match=r"evil.tar.gz!config.json: evaluation.type is 'os.system'"):
        load_archive(str(archive))


def test_import_paths_load_when_the_user_allows_them(good_archive, sandbox, monkeypatch):
    members = with_config(members_of(good_archive), lambda config: set_path(
        config, "model.type", "memplugins.models.rte_attention.RteAttention"))
    archive = write_archive(sandbox / "trusted.tar.gz", members)
    with pytest.raises(ArchiveError, match="import path"):
        load_archive(str(archive))
    assert type(load_archive(str(archive), allow_import_paths=True).model).__name__ == "RteAttention"
    monkeypatch.setenv("MEMPLUGINS_ALLOW_IMPORT_PATHS", "1")
    assert type(load_archive(str(archive)).model).__name__ == "RteAttention"


def test_a_users_overrides_are_the_users_own(good_archive):
    """Overrides come from the person running the command, not the archive: they are not checked."""
    archive = load_archive(str(good_archive), overrides={"model.dropout": 0.0})
    assert archive.config["model"]["dropout"] == 0.0


@pytest.mark.parametrize("member, data, message", [
    ("config.json", b"\xff\xfe not utf-8", "config must be UTF-8 JSON"),
    ("meta.json", b'{"version": ', "member 'meta.json' is not AllenNLP's meta record"),
    ("vocabulary/tokens.txt", b"\xff\xfe\x00", "a vocabulary or other text member is not UTF-8"),
])
def test_other_unreadable_members_are_named(good_archive, sandbox, member, data, message):
    archive = write_archive(sandbox / "bad.tar.gz", replaced(members_of(good_archive), member, data))
    with pytest.raises(ArchiveError, match=message):
        load_archive(str(archive))
