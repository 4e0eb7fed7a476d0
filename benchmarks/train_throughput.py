"""
End-to-end training throughput, not part of CI: `allennlp train`'s own training loop (in this process, one config
after another, so the figures share one machine state) for one epoch over the real SNLI 1.0 dev pairs (9,842
labelled), no validation, with and without `"use_amp": true`. Every SNLI config of ours and allennlp-models' `esim`
and `decomposable_attention` (benchmarks/configs/) get the same reader, vocabulary, fixed GloVe 6B 50d embeddings
and each its own batch size. Prints instances per second of training and, on CUDA, peak allocated GPU memory.

    .venv/bin/python benchmarks/train_throughput.py --data ../shared/data --cuda-device 0 [--amp both|on|off]
        [--only snli_nse esim ...]
"""
import argparse
import gzip
import json
import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = {
    "snli_rte_conditional": "training_config/snli_rte_conditional.jsonnet",
    "snli_rte_attention": "training_config/snli_rte_attention.jsonnet",
    "snli_rte_word_by_word": "training_config/snli_rte_word_by_word.jsonnet",
    "snli_lstmn_shallow_fusion": "training_config/snli_lstmn_shallow_fusion.jsonnet",
    "snli_lstmn_deep_fusion": "training_config/snli_lstmn_deep_fusion.jsonnet",
    "snli_nse": "training_config/snli_nse.jsonnet",
    "snli_mma_nse": "training_config/snli_mma_nse.jsonnet",
    "snli_mma_nse_attention": "training_config/snli_mma_nse_attention.jsonnet",
    "snli_tree_lstm": "training_config/snli_tree_lstm.jsonnet",
    "esim (allennlp-models)": "benchmarks/configs/snli_esim.jsonnet",
    "decomposable_attention (allennlp-models)": "benchmarks/configs/snli_decomposable_attention.jsonnet",
}


def seconds(duration: str) -> float:
    h, m, s = duration.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--cuda-device", type=int, default=-1)
    parser.add_argument("--amp", choices=["both", "on", "off"], default="both")
    parser.add_argument("--only", nargs="*", default=list(CONFIGS))
    args = parser.parse_args()
    data = Path(args.data).resolve()
    snli = data / "snli" / "snli_1.0_dev.jsonl.gz"
    with gzip.open(snli, "rt", encoding="utf-8") as f:
        instances = sum(1 for line in f if line.strip() and json.loads(line)["gold_label"] != "-")
    os.environ.update(SNLI_TRAIN=str(snli), SNLI_VALIDATION="", EMBEDDING_DIM="50", NUM_EPOCHS="1",
                      GLOVE_PATH=str(data / "glove" / "glove.6B.50d.sst_snli-devtest.txt.gz"))
    os.chdir(ROOT)
    import logging

    import torch
    from allennlp.commands.train import train_model_from_file
    from allennlp.common.plugins import import_plugins

    import memplugins  # noqa: F401

    import_plugins()
    logging.disable(logging.INFO)
    cuda = args.cuda_device >= 0
    amps = {"both": [False, True], "on": [True], "off": [False]}[args.amp] if cuda else [False]
    where = torch.cuda.get_device_name(args.cuda_device) if cuda else f"cpu, {torch.get_num_threads()} threads"
    print(f"one epoch of SNLI dev ({instances} pairs), {where}, torch {torch.__version__}")
    print("| config | AMP | instances/s | epoch s |" + (" peak GPU MB |" if cuda else ""))
    print("|---|---|---:|---:|" + ("---:|" if cuda else ""), flush=True)
    for name in args.only:
        for amp in amps:
            if cuda:
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats(args.cuda_device)
            with tempfile.TemporaryDirectory() as out:
                overrides = {"trainer": {"cuda_device": args.cuda_device, "use_amp": amp, "num_epochs": 1}}
                train_model_from_file(CONFIGS[name], out, overrides=json.dumps(overrides))
                metrics = json.loads((Path(out) / "metrics.json").read_text())
            duration = seconds(metrics["training_duration"])
            peak = f" {torch.cuda.max_memory_allocated(args.cuda_device) / 2**20:.0f} |" if cuda else ""
            print(f"| {name} | {'on' if amp else 'off'} | {instances / duration:.0f} | {duration:.1f} |{peak}",
                  flush=True)


if __name__ == "__main__":
    main()
