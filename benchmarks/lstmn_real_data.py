"""
Real-data runs for the LSTMN (issue: LSTMN), not part of CI. One invocation runs every task below in sequence on
the same machine and prints one table per task; results are kept under benchmarks/results/lstmn/.

* PTB language modelling: training_config/ptb_lstmn_lm.jsonnet against the same config with allennlp's `lstm`
  contextualizer of the same size (embeddings 150, hidden 300), both trained at the same time, one CPU core each,
  for the same minutes (`--ptb-minutes`; "epochs" of `--ptb-batches` batches so that validation and checkpointing
  happen often; the best checkpoint is kept), then perplexity on ptb.valid / ptb.test by `allennlp evaluate`
  (allennlp-models' batch-averaged metric) and the token-weighted test perplexity (benchmarks/ptb_token_perplexity.py).
* SNLI: shallow and deep fusion (h = 100) trained on SNLI dev (9,842 pairs; train is not available here) for
  `--snli-epochs`, evaluated on SNLI test (9,824), as in benchmarks/snli_rte.py.
* SST: training_config/sst_lstmn.jsonnet, 1 layer, fine-grained and binary, trained on trees/train.txt with
  trees/dev.txt for model selection, `--sst-epochs`, accuracy on trees/test.txt.

GloVe: 6B 50d (the only vectors available here; the paper uses 300d 840B).

    .venv/bin/python benchmarks/lstmn_real_data.py --data ../shared/data [--only ptb snli sst]
"""
import argparse
import json
import subprocess
from pathlib import Path

# benchmarks/ is this file's folder, so its modules import directly
from runs import ALLENNLP, ROOT, count_parameters, epochs_and_seconds, evaluate, run_tasks, train


def run_ptb(args, base_env, results: Path) -> str:
    """Both contextualizers train at the same time, one CPU core (one thread) each, for the same minutes."""
    data = Path(args.data) / "ptb"
    env = {**base_env, "PTB_TRAIN": str(data / "ptb.train.txt"), "PTB_VALIDATION": str(data / "ptb.valid.txt"),
           "NUM_EPOCHS": "1000", "PYTHONPATH": str(ROOT / "benchmarks"), "OMP_NUM_THREADS": "1"}
    common = {"data_loader.batches_per_epoch": args.ptb_batches,
              "trainer.callbacks": [{"type": "time_budget", "minutes": args.ptb_minutes}]}
    variants = {
        "lstmn": common,
        "lstm": {**common, "model.contextualizer": {"type": "lstm", "input_size": 150, "hidden_size": 300,
                                                    "num_layers": 1, "dropout": 0.5}},
    }
    runs = []
    for name, overrides in variants.items():
        out = results / "ptb" / name
        if (out / "model.tar.gz").exists():
            continue
        subprocess.run(["rm", "-rf", str(out)], check=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        command = [*ALLENNLP, "train", "training_config/ptb_lstmn_lm.jsonnet", "-s", str(out), "--include-package",
                   "memplugins", "--include-package", "time_budget", "-o", json.dumps(overrides)]
        runs.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                     stderr=open(f"{out}.train.log", "w")))
    for run in runs:
        run.wait()  # the budget stop exits non-zero after archiving the best epoch
    lines = [f"PTB LM, {args.ptb_minutes:g} min of training each, both at once on one CPU core (1 thread) each; "
             "emb 150, hidden 300, SGD 0.65",
             "| contextualizer | batches trained | valid ppl (allennlp evaluate) | test ppl (allennlp evaluate) | "
             "test ppl, token-weighted |", "|---|---:|---:|---:|---:|"]
    from allennlp.common.plugins import import_plugins
    from ptb_token_perplexity import token_perplexity  # benchmarks/ is on sys.path: it is this file's folder

    from memplugins.cli import keep_nltk_offline

    keep_nltk_offline()  # as the memplugins command: allennlp-models asks nltk to download at import
    import_plugins()  # the archives name allennlp-models' reader and model

    for name in variants:
        out = results / "ptb" / name
        valid = evaluate(out / "model.tar.gz", str(data / "ptb.valid.txt"), env)
        test = evaluate(out / "model.tar.gz", str(data / "ptb.test.txt"), env)
        exact = token_perplexity(str(out / "model.tar.gz"), str(data / "ptb.test.txt"))
        epochs, _ = epochs_and_seconds(out)
        lines.append(f"| {name} | {epochs * args.ptb_batches:,} | {valid['perplexity']:.1f} | "
                     f"{test['perplexity']:.1f} | {exact:.1f} |")
    return "\n".join(lines)


def run_snli(args, base_env, results: Path) -> str:
    data = Path(args.data)
    env = {**base_env, "SNLI_TRAIN": str(data / "snli" / "snli_1.0_dev.jsonl.gz"), "SNLI_VALIDATION": "",
           "GLOVE_PATH": str(data / "glove" / "glove.6B.50d.sst_snli-devtest.txt.gz"), "EMBEDDING_DIM": "50",
           "NUM_EPOCHS": str(args.snli_epochs)}
    lines = [f"SNLI dev (9,842) -> test (9,824), GloVe 6B 50d, h = 100, {args.snli_epochs} epochs",
             "| model | SNLI test acc. | s / epoch | params excl. embeddings |", "|---|---:|---:|---:|"]
    for fusion in args.fusions:
        out = results / "snli" / fusion
        train(f"training_config/snli_lstmn_{fusion}_fusion.jsonnet", out, env)
        test = evaluate(out / "model.tar.gz", str(data / "snli" / "snli_1.0_test.jsonl.gz"), env)
        epochs, seconds = epochs_and_seconds(out)
        lines.append(f"| lstmn_fusion {fusion if fusion != 'no' else 'none'} | {test['accuracy']:.4f} | {seconds / max(epochs, 1):.1f} | "
                     f"{count_parameters(out / 'model.tar.gz', exclude='embedder')[0]:,} |")
    return "\n".join(lines)


def run_sst(args, base_env, results: Path) -> str:
    trees = Path(args.data) / "sst" / "trees"
    env = {**base_env, "SST_TRAIN": str(trees / "train.txt"), "SST_VALIDATION": str(trees / "dev.txt"),
           "GLOVE_PATH": str(Path(args.data) / "glove" / "glove.6B.50d.sst_snli-devtest.txt.gz"), "EMBEDDING_DIM": "50",
           "NUM_EPOCHS": str(args.sst_epochs), "LSTMN_LAYERS": "1"}
    lines = [f"SST sentences, 1-layer LSTMN (memory 168), GloVe 6B 50d, {args.sst_epochs} epochs, best dev epoch",
             "| task | test acc. | best dev acc. | s / epoch |", "|---|---:|---:|---:|"]
    for granularity in ("5-class", "2-class"):
        out = results / "sst" / granularity
        train("training_config/sst_lstmn.jsonnet", out, {**env, "SST_GRANULARITY": granularity})
        test = evaluate(out / "model.tar.gz", str(trees / "test.txt"), env)
        metrics = json.loads((out / "metrics.json").read_text())
        epochs, seconds = epochs_and_seconds(out)
        lines.append(f"| {granularity} | {test['accuracy']:.4f} | {metrics['best_validation_accuracy']:.4f} | "
                     f"{seconds / max(epochs, 1):.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "lstmn"))
    parser.add_argument("--only", nargs="*", default=["snli", "sst", "ptb"])
    parser.add_argument("--ptb-minutes", type=float, default=10)
    parser.add_argument("--ptb-batches", type=int, default=150)
    parser.add_argument("--snli-epochs", type=int, default=5)
    parser.add_argument("--fusions", nargs="*", default=["no", "shallow", "deep"], help="SNLI models: no / shallow / deep")
    parser.add_argument("--sst-epochs", type=int, default=3)
    args = parser.parse_args()
    results = Path(args.out)
    runners = {"ptb": run_ptb, "snli": run_snli, "sst": run_sst}
    run_tasks(runners, args, results)


if __name__ == "__main__":
    main()
