"""docs/results.md and the README's results table are rendered from the results file (benchmarks/replication/
render.py): out of date fails here, and the rendering's rules (protocol, pick, mean ± sd) hold."""
import json
import sys

import pytest

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks" / "replication"))
import render  # noqa: E402


def test_the_rendered_results_and_readme_table_are_up_to_date():
    stale = [path.name for path, text in render.render().items() if path.read_text(encoding="utf-8") != text]
    assert not stale, f"out of date: {stale}; run python benchmarks/replication/render.py"


def test_check_mode_fails_on_a_stale_file(tmp_path, monkeypatch, capsys):
    doc = tmp_path / "results.md"
    doc.write_text("# an old hand-written page\n")
    readme = tmp_path / "README.md"
    readme.write_text((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    monkeypatch.setattr(render, "RESULTS_DOC", doc)
    monkeypatch.setattr(render, "README", readme)
    monkeypatch.setattr(render, "ROOT", tmp_path)
    assert render.main(["--check"]) == 1
    assert "results.md" in capsys.readouterr().err
    assert render.main([]) == 0 and render.main(["--check"]) == 0


def line(row, seed, dev, value, **more):
    return {"family": "f", "row": row, "system": "ours", "label": "x", "seed": seed, "dev": dev, "value": value,
            "dev_metric": more.pop("dev_metric", "accuracy"), "metric": "accuracy", "paper": 0.9, "data": "d",
            "device": "cpu", "date": "2026-11-30", **more}


def test_pick_is_the_best_dev_seed_and_mean_sd_cover_the_same_seeds_of_the_current_protocol():
    results = [line("r", 1, 0.80, 0.70, vocabulary="glove", unknown_row="zero"),
               line("r", 2, 0.85, 0.60, vocabulary="glove", unknown_row="zero"),
               line("r", 3, 0.99, 0.99)]  # an earlier vocabulary: not mixed in, although newer and better on dev
    seeds = render.seeds_of(results, "f", "r")
    assert [result["seed"] for result in seeds] == [1, 2]
    assert render.Figures({"scale": 100, "digits": 1}).summary(seeds) == "60.0; 65.0 ± 7.1, n = 2"
    perplexity = [line("p", 1, 110.0, 105.0, dev_metric="perplexity"), line("p", 2, 100.0, 107.0,
                                                                           dev_metric="perplexity")]
    assert render.pick(perplexity)["value"] == 107.0  # lower dev perplexity wins


def test_a_verdict_is_at_most_five_lines_and_names_rows_that_exist():
    verdicts = json.loads(render.VERDICTS.read_text(encoding="utf-8"))
    render.check_verdicts(verdicts)
    with pytest.raises(ValueError, match="1 to 5 lines"):
        render.check_verdicts({"f": {"verdict": ["a"] * 6}})
    with pytest.raises(KeyError, match="no line"):
        render.seeds_of([], "f", "missing_row")
