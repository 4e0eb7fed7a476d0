"""
Real-data runs for NSE / MMA-NSE (issue: NSE), not part of CI. One invocation runs the tasks below in sequence on
the same machine, prints one table per task, and keeps its results under benchmarks/results/nse/.

Every run gets the same wall-clock budget per task (benchmarks/time_budget.py stops training at the end of the
first "epoch" after `--*-minutes`; "epochs" are `--batches` batches so that the budget is met closely), because a
faithful run (SNLI train, 40 epochs, k = 300) is far beyond a CPU session. The configs are the shipped ones with
the paper's settings; what differs from the paper is listed in each table's caption.

* SNLI: snli_nse / snli_mma_nse / snli_mma_nse_attention trained on SNLI *dev* (9,842 labelled pairs; SNLI train
  is not available here), no model selection (no held-out split left: the last checkpoint is scored), evaluated on
  SNLI *test* (9,824), as in benchmarks/snli_rte.py.
* SST: sst2_nse / sst5_nse trained on every labelled phrase of trees/train.txt, the best epoch chosen on the dev
  sentences, accuracy on the test sentences.
* WikiQA: wikiqa_mma_nse_attention trained on `--wikiqa-batches` batches of WikiQA-train.txt (no dev validation:
  at k = 512 it would take most of the budget; the last checkpoint is scored), MAP / MRR on
  WikiQA-test.tsv (questions without a correct answer left out, as the standard evaluation does: 243 of 633).

GloVe: 6B 50d (the only vectors available here; the paper uses 300d 840B), so the memory is initialised through a
learned projection of the embeddings rather than from the embeddings themselves.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/nse_real_data.py --data ../shared/data [--only snli sst wikiqa]
"""
import argparse
import json
from pathlib import Path

# benchmarks/ is this file's folder, so its modules import directly
from runs import ROOT, count_parameters, epochs_and_seconds, evaluate, run_tasks, train


def budget(minutes: float, batches: int) -> dict:
    return {"data_loader.batches_per_epoch": batches, "trainer.callbacks": [{"type": "time_budget", "minutes": minutes}]}


def budget_env(base_env) -> dict:
    return {**base_env, "NUM_EPOCHS": "1000", "PYTHONPATH": str(ROOT / "benchmarks")}


def last_metrics(out: Path) -> dict:
    """The metrics of the last finished epoch (a time-budget stop writes no metrics.json; each epoch's file also
    carries the best_validation_* figures so far)."""
    epochs = sorted(out.glob("metrics_epoch_*.json"), key=lambda p: int(p.stem.split("_")[-1]))
    return json.loads(epochs[-1].read_text())


def trained_batches(out: Path, batches: int) -> int:
    return epochs_and_seconds(out)[0] * batches


def run_snli(args, base_env, results: Path) -> str:
    data = Path(args.data)
    env = {**budget_env(base_env), "SNLI_TRAIN": str(data / "snli" / "snli_1.0_dev.jsonl.gz"), "SNLI_VALIDATION": "",
           "GLOVE_PATH": str(data / "glove" / "glove.6B.50d.sst_snli-devtest.txt.gz"), "EMBEDDING_DIM": "50"}
    lines = [f"SNLI dev (9,842 pairs) -> test (9,824); GloVe 6B 50d fixed, k = 300, batch 128; "
             f"{args.snli_minutes:g} min of training each (paper: SNLI train, 40 epochs, 300d GloVe 840B)",
             "| model | SNLI test acc. | paper | train (dev) acc. | batches trained | s / batch | params excl. embeddings |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    paper = {"nse": 84.6, "mma_nse": 84.8, "mma_nse_attention": 85.4}
    for variant, paper_acc in paper.items():
        out = results / "snli" / variant
        train(f"training_config/snli_{variant}.jsonnet", out, env, budget(args.snli_minutes, args.batches),
              extra=["--include-package", "time_budget"])
        test = evaluate(out / "model.tar.gz", str(data / "snli" / "snli_1.0_test.jsonl.gz"), env)
        metrics = last_metrics(out)
        epochs, seconds = epochs_and_seconds(out)
        lines.append(f"| {variant} | {test['accuracy']:.4f} | {paper_acc} | {metrics['training_accuracy']:.4f} | "
                     f"{epochs * args.batches:,} | {seconds / max(epochs * args.batches, 1):.2f} | "
                     f"{count_parameters(out / 'model.tar.gz', exclude='embedder')[0]:,} |")
    return "\n".join(lines)


def run_sst(args, base_env, results: Path) -> str:
    trees = Path(args.data) / "sst" / "trees"
    env = {**budget_env(base_env), "SST_TRAIN": str(trees / "train.txt"), "SST_VALIDATION": str(trees / "dev.txt"),
           "GLOVE_PATH": str(Path(args.data) / "glove" / "glove.6B.50d.sst_snli-devtest.txt.gz"),
           "EMBEDDING_DIM": "50"}
    lines = [f"SST, trained on all labelled phrases, sentences for dev/test; GloVe 6B 50d fixed, k = 300, batch 64; "
             f"{args.sst_minutes:g} min of training each, best dev epoch (paper: 25 epochs, 300d GloVe 840B)",
             "| task | test acc. | paper | best dev acc. | batches of 64 trained | passes over the phrases |",
             "|---|---:|---:|---:|---:|---:|"]
    phrases = {"sst2": 98_794, "sst5": 318_582}  # labelled phrases of trees/train.txt (2-class: neutral dropped)
    for task, paper_acc in (("sst2", 89.7), ("sst5", 52.8)):
        out = results / "sst" / task
        train(f"training_config/{task}_nse.jsonnet", out, env, budget(args.sst_minutes, args.batches),
              extra=["--include-package", "time_budget"])
        test = evaluate(out / "model.tar.gz", str(trees / "test.txt"), env)
        metrics = last_metrics(out)
        batches = trained_batches(out, args.batches)
        lines.append(f"| {task} | {test['accuracy']:.4f} | {paper_acc} | {metrics['best_validation_accuracy']:.4f} | "
                     f"{batches:,} | {batches * 64 / phrases[task]:.2f} |")
    return "\n".join(lines)


def questions_with_an_answer(test_file: Path, out: Path) -> str:
    """The test .tsv without the questions that have no correct candidate: MAP / MRR leave those out anyway (as the
    standard evaluation does), so the scores are the same and the evaluation is about 2.5x cheaper."""
    lines = test_file.read_text(encoding="utf-8").splitlines()
    answered = {line.split("\t")[0] for line in lines[1:] if line.rsplit("\t", 1)[-1].strip() == "1"}
    kept = [lines[0]] + [line for line in lines[1:] if line.split("\t")[0] in answered]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return str(out)


def run_wikiqa(args, base_env, results: Path) -> str:
    corpus = Path(args.data) / "wikiqa" / "WikiQACorpus"
    env = {**base_env, "WIKIQA_TRAIN": str(corpus / "WikiQA-train.txt"), "NUM_EPOCHS": "1",
           # WikiQA's vocabulary is not in the SST/SNLI subset of the vectors
           "GLOVE_PATH": str(Path(args.data) / "glove" / "glove.6B.50d.top100k.txt.gz"), "EMBEDDING_DIM": "50"}
    # The paper's batch 4 / lr 1e-5 does not move in a CPU budget: batch 32, lr 3e-4. Dev validation (2,733 pairs)
    # costs minutes at k = 512, so the budget goes to training: no model selection, the model after
    # `--wikiqa-batches` batches is scored.
    overrides = {"data_loader.batch_size": 32, "data_loader.batches_per_epoch": args.wikiqa_batches,
                 "trainer.optimizer.lr": 0.0003, "validation_data_path": None}
    lines = [f"WikiQA train -> test (MAP/MRR over the 243 test questions with a correct answer); GloVe 6B 50d "
             f"fixed, k = 512, 2-layer read/write LSTMs; batch 32, Adam 3e-4 (paper: batch 4, 1e-5, 10 epochs, "
             f"300d GloVe 840B); {args.wikiqa_batches} batches of training, no model selection",
             "| model | test MAP | test MRR | paper MAP / MRR | training pairs seen | training minutes |",
             "|---|---:|---:|---|---:|---:|"]
    out = results / "wikiqa" / "mma_nse_attention"
    train("training_config/wikiqa_mma_nse_attention.jsonnet", out, env, overrides)
    test_file = questions_with_an_answer(corpus / "WikiQA-test.tsv", results / "wikiqa" / "WikiQA-test.answered.tsv")
    test = evaluate(out / "model.tar.gz", test_file, env)
    lines.append(f"| answer_selection (mma_nse_attention) | {test['MAP']:.4f} | {test['MRR']:.4f} | .6811 / .6993 | "
                 f"{32 * args.wikiqa_batches:,} | {epochs_and_seconds(out)[1] / 60:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "nse"))
    parser.add_argument("--only", nargs="*", default=["snli", "sst", "wikiqa"])
    parser.add_argument("--batches", type=int, default=40, help="batches per budget 'epoch'")
    parser.add_argument("--snli-minutes", type=float, default=10)
    parser.add_argument("--sst-minutes", type=float, default=12)
    parser.add_argument("--wikiqa-batches", type=int, default=100)
    args = parser.parse_args()
    results = Path(args.out)
    runners = {"snli": run_snli, "sst": run_sst, "wikiqa": run_wikiqa}
    run_tasks(runners, args, results)


if __name__ == "__main__":
    main()
