"""
Soak test (issue 13), not part of CI: trains each config through `allennlp train` (one process per config, as
users run it) on its real data for a fixed number of batches, cycling the data (`data_loader.batches_per_epoch`,
one epoch, no validation), and samples the process's resident memory every 50 batches (`benchmarks/speed/rss_sampler.py`,
after `gc.collect()`). Prints per config: RSS at the first sample and at the end, the least-squares slope over the
samples after the first (the first 50 batches warm allocators, caches and optimizer state up) in MB per 1,000
batches, the median (Theil-Sen) slope over the same samples, robust to a one-off step of the allocator's high-water
mark, and that as a percentage of the start. Goal: under 1% of the start per 1,000 batches. (Before issue 13's fix
the NSE configs grew by about 13 MB a batch, over 10,000 MB per 1,000.)

SNLI configs read an SNLI-scale stream: the real SNLI 1.0 dev and test pairs (19,666 labelled), shuffled, cycled.

    .venv/bin/python benchmarks/speed/soak.py --data ../shared/data [--batches 600] [--only snli_nse ...] [--cuda-device 0]
"""
import argparse
import gzip
import json
import os
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CONFIGS = ["snli_mma_nse", "snli_nse", "iwslt14_nse_nse", "wikiqa_mma_nse_attention", "sst2_tree_lstm",
           "sst2_iram_full", "snli_lstmn_deep_fusion"]


def snli_stream(data: Path, out: Path) -> Path:
    """The SNLI dev + test pairs, shuffled, as one jsonl file."""
    stream = out / "snli_dev_test_shuffled.jsonl"
    if not stream.exists():
        lines = []
        for split in ("dev", "test"):
            with gzip.open(data / "snli" / f"snli_1.0_{split}.jsonl.gz", "rt", encoding="utf-8") as f:
                lines += [line for line in f if line.strip()]
        random.Random(0).shuffle(lines)
        stream.write_text("".join(lines), encoding="utf-8")
    return stream


def environment(data: Path, out: Path) -> dict:
    return {
        **os.environ,
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
        "SNLI_TRAIN": str(snli_stream(data, out)),
        "SNLI_VALIDATION": "",
        "GLOVE_PATH": str(data / "glove" / "glove.6B.50d.sst_snli-devtest.txt.gz"),
        "EMBEDDING_DIM": "50",
        "IWSLT_TRAIN": str(data / "iwslt14_de_en" / "valid.de-en"),
        "IWSLT_VALIDATION": "",
        "WIKIQA_TRAIN": str(data / "wikiqa" / "WikiQACorpus" / "WikiQA-train.txt"),
        "WIKIQA_VALIDATION": str(data / "wikiqa" / "WikiQACorpus" / "WikiQA-dev.tsv"),
        "SST_TRAIN": str(data / "sst" / "trees" / "train.txt"),
        "SST_VALIDATION": str(data / "sst" / "trees" / "dev.txt"),
        "NUM_EPOCHS": "1",
    }


def slope(points):
    """Least-squares slope of rss over batches."""
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    var = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / var if var else 0.0


def median_slope(points):
    """Theil-Sen: the median of the slopes between all pairs of samples. A one-off step (the allocator's high-water
    mark rising at a batch of the longest sentences, then flat) moves it little; growth at every step moves it fully."""
    slopes = sorted((y2 - y1) / (x2 - x1) for i, (x1, y1) in enumerate(points) for x2, y2 in points[i + 1 :])
    return slopes[len(slopes) // 2] if slopes else 0.0


def soak(config: str, args, env: dict, out: Path) -> str:
    samples = out / f"{config}.rss.jsonl"
    if not args.table_only:
        samples.unlink(missing_ok=True)
        train(config, args, env, out, samples)
    points = [json.loads(line) for line in samples.read_text().splitlines()] if samples.exists() else []
    if len(points) < 3:
        return f"| {config} | failed: see {out / (config + '.log')} | | | | | |"
    start, end = points[0][1], points[-1][1]
    fit = slope([(b, rss) for b, rss, _ in points[1:]]) * 1000
    robust = median_slope([(b, rss) for b, rss, _ in points[1:]]) * 1000
    cuda = f" {points[0][2]:.0f} → {points[-1][2]:.0f} |" if args.cuda_device >= 0 else ""
    return (f"| {config} | {points[-1][0]} | {start:.0f} | {end:.0f} | {fit:+.1f} | {robust:+.1f} | "
            f"{100 * robust / start:+.2f}% |" + cuda)


def train(config: str, args, env: dict, out: Path, samples: Path) -> None:
    run_dir = out / config
    subprocess.run(["rm", "-rf", str(run_dir)], check=True)
    overrides = {
        "data_loader.batches_per_epoch": args.batches,
        "trainer.num_epochs": 1,
        "trainer.cuda_device": args.cuda_device,
        "trainer.callbacks": [{"type": "rss_sampler", "path": str(samples), "every": args.every}],
    }
    if args.amp:
        overrides["trainer.use_amp"] = True
    command = [sys.executable, "-m", "allennlp", "train", f"training_config/{config}.jsonnet", "-s", str(run_dir),
               "--include-package", "memplugins", "--include-package", "rss_sampler", "-o", json.dumps(overrides)]
    with open(out / f"{config}.log", "w") as log:
        python_path = os.pathsep.join(p for p in [str(ROOT / "benchmarks" / "speed"), env.get("PYTHONPATH", "")] if p)
        subprocess.run(command, cwd=ROOT, env={**env, "PYTHONPATH": python_path}, stdout=log,
                       stderr=subprocess.STDOUT, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--batches", type=int, default=600)
    parser.add_argument("--every", type=int, default=50)
    parser.add_argument("--cuda-device", type=int, default=-1)
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--only", nargs="*", default=CONFIGS)
    parser.add_argument("--table-only", action="store_true", help="the table from the samples of an earlier run")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "soak"))
    args = parser.parse_args()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = environment(Path(args.data).resolve(), out)
    header = ["| config | batches | RSS start (MB) | RSS end (MB) | least-squares slope (MB / 1,000 batches) | "
              "median slope (MB / 1,000 batches) | median slope / start |"
              + (" CUDA allocated (MB) |" if args.cuda_device >= 0 else ""),
              "|---|---:|---:|---:|---:|---:|---:|" + ("---|" if args.cuda_device >= 0 else "")]
    print("\n".join(header), flush=True)
    rows = []
    for config in args.only:
        rows.append(soak(config, args, env, out))
        print(rows[-1], flush=True)
    (out / "table.md").write_text("\n".join(header + rows) + "\n")


if __name__ == "__main__":
    main()
