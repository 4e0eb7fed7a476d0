"""
Real-data comparison for the Rocktäschel et al. RTE models (issue: foundation), not part of CI.

Trains every model on the SNLI 1.0 *dev* split (9,842 labelled pairs; SNLI train is not available here) with fixed
GloVe 6B 50d vectors for a fixed number of epochs (no model selection: there is no held-out split left), evaluates
the final model on the SNLI 1.0 *test* split (9,824 labelled pairs), and prints a table:
test accuracy, seconds per training epoch, parameters (trainable / total incl. fixed embeddings).
All models are run one after another in this one invocation on the same machine, so their times are comparable.

    .venv/bin/python benchmarks/snli_rte.py --data ../shared/data --epochs 10 [--only word_by_word esim]
"""
import argparse
import json
import os
from pathlib import Path

# benchmarks/ is this file's folder
from runs import ROOT, count_parameters, epochs_and_seconds, evaluate, train, write_table
MODELS = {
    "conditional": "training_config/snli_rte_conditional.jsonnet",
    "attention": "training_config/snli_rte_attention.jsonnet",
    "word_by_word": "training_config/snli_rte_word_by_word.jsonnet",
    "two_way": "training_config/snli_rte_two_way.jsonnet",
    "shared": "training_config/snli_rte_shared.jsonnet",
    "decomposable_attention": "benchmarks/configs/snli_decomposable_attention.jsonnet",
    "esim": "benchmarks/configs/snli_esim.jsonnet",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "snli_rte"))
    parser.add_argument("--only", nargs="*", default=list(MODELS))
    args = parser.parse_args()
    data = Path(args.data)
    env = {
        **os.environ,
        "SNLI_TRAIN": str(data / "snli" / "snli_1.0_dev.jsonl.gz"),
        "SNLI_VALIDATION": "",
        "GLOVE_PATH": str(data / "glove" / "glove.6B.50d.sst_snli-devtest.txt.gz"),
        "EMBEDDING_DIM": "50",
        "NUM_EPOCHS": str(args.epochs),
    }
    test_file = str(data / "snli" / "snli_1.0_test.jsonl.gz")
    rows = []
    for name in args.only:
        out = Path(args.out) / name
        train(MODELS[name], out, env)
        metrics = json.loads((out / "metrics.json").read_text())
        epochs, seconds = epochs_and_seconds(out)
        test = evaluate(out / "model.tar.gz", test_file, env)
        trainable, total = count_parameters(out / "model.tar.gz")
        rows.append((name, test["accuracy"], metrics["training_accuracy"], seconds / max(epochs, 1), trainable, total))

    header = "| model | SNLI test acc. | train (dev) acc. | s / epoch | trainable params | params incl. embeddings |"
    lines = [header, "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {n} | {a:.4f} | {t:.4f} | {s:.1f} | {p:,} | {q:,} |" for n, a, t, s, p, q in rows]
    print(f"SNLI dev (9,842 pairs) -> test (9,824), GloVe 6B 50d fixed, {args.epochs} epochs, CPU threads: "
          f"{os.environ.get('OMP_NUM_THREADS', 'default')}")
    write_table(lines, Path(args.out))


if __name__ == "__main__":
    main()
