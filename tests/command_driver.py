"""
Runs many command lines in one process, each as its console script runs it, so that a test can check dozens of
crafted inputs through the real command line without paying AllenNLP's start-up (about 10 s) for each:

    python -m tests.command_driver ROWS.json RESULTS.json

ROWS.json is a list of `{"program": "memplugins" | "allennlp", "argv": [...], "cwd": "..."}`. `memplugins` rows
run `memplugins_launcher.main()` (the console script's entry point) with `sys.argv` set; `allennlp` rows run
AllenNLP's `allennlp.commands.main` as its console script does. RESULTS.json gets, per row, the exit status
(`code`), what was printed to standard error (`stderr`; AllenNLP's log handlers write to the process's own
stderr, not to this capture) and the traceback of an exception that escaped (`traceback`, "" if none).
"""
import contextlib
import io
import json
import os
import sys
import traceback


def run_row(row: dict) -> dict:
    os.chdir(row["cwd"])
    sys.argv = [row["program"], *row["argv"]]
    captured = io.StringIO()
    code, escaped = None, ""
    with contextlib.redirect_stderr(captured):
        try:
            if row["program"] == "memplugins":
                import memplugins_launcher

                code = memplugins_launcher.main()
            else:
                from allennlp.commands import main

                main(prog="allennlp")
                code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except BaseException:  # noqa: BLE001  (recorded: the test decides)
            escaped, code = traceback.format_exc(), 1
    return {"code": code, "stderr": captured.getvalue(), "traceback": escaped}


def main(rows_file: str, results_file: str) -> None:
    with open(rows_file, encoding="utf-8") as handle:
        rows = json.load(handle)
    results = [run_row(row) for row in rows]
    with open(results_file, "w", encoding="utf-8") as handle:
        json.dump(results, handle)


def run_rows(rows, tmp_path, env=None, timeout=900):
    """Runs `rows` through this driver in a fresh Python process (offline, from `tmp_path`); returns the results."""
    import subprocess

    from tests.conftest import NO_NETWORK_PATH, REPO_ROOT

    rows_file, results_file = tmp_path / "rows.json", tmp_path / "results.json"
    rows_file.write_text(json.dumps(rows))
    environment = {**os.environ, "PYTHONPATH": f"{NO_NETWORK_PATH}:{REPO_ROOT}", **(env or {})}
    finished = subprocess.run([sys.executable, "-m", "tests.command_driver", str(rows_file), str(results_file)],
                              cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=timeout)
    assert finished.returncode == 0 and results_file.exists(), finished.stderr[-5000:]
    return json.loads(results_file.read_text())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
