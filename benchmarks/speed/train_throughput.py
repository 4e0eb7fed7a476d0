"""
End-to-end training throughput, not part of CI: `allennlp train`'s own training loop (in this process, one config
after another, so the figures share one machine state), one epoch, no validation, every config at the same batch
size (`--batch-size`, default 32: the `batch_size` of its data loader or batch sampler is overridden).

* SNLI: the real SNLI 1.0 dev pairs (9,842 labelled). Every SNLI config of ours and allennlp-models' `esim` and
  `decomposable_attention` (benchmarks/replication/configs/) read them with the same reader and vocabulary and use the same
  fixed GloVe 6B 50d embeddings.
* SST: the real SST train sentences, binary (6,920 sentences; neutral dropped). Every `sst2_*` config of ours (and
  `sst_lstmn` at 2-class), against allennlp-models' `basic_classifier` with an `lstm` and `bcn` (benchmarks/
  configs/sst2_*.jsonnet, which read the same file through allennlp-models' own `sst_tokens` reader), the same
  GloVe vectors. Configs that train on every labelled phrase (`use_subtrees`) are run on the sentences here, so
  that all read the same instances; `sst2_tree_lstm` trains with its softmax at every labelled node, as the paper
  does (the same sentences, a loss per node).

Prints instances per second of training (instances / the epoch's training duration), and on CUDA the peak
allocated GPU memory. `--loader` adds how long the data loader alone takes for the same epoch (instances already
read, as in training: tensorising, padding, batching and the copy to the device), so the share of the epoch that the
data pipeline bounds is seen beside the model's.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/speed/train_throughput.py --data ../shared/data [--task snli sst]
        [--cuda-device 0 --amp both|on|off] [--only snli_nse esim ...] [--conditions quiet busy]

`--conditions busy` trains while a second single-thread process competes for the machine (`benchmarks/speed/load.py`).
`--data-loader multiprocess|tensorized` puts every config on AllenNLP's loader or on memplugins' (which the
shipped configs name), to compare the two on the same models. `--num-workers N` sets every config's
`data_loader.num_workers` (AllenNLP's multi-process loading; our readers
shard by worker), to see how much of an epoch the single-process data pipeline bounds.
`--epochs N` trains N epochs and reports the last one (what a long run sees once the first epoch's one-time work,
such as capturing CUDA graphs under `MEMPLUGINS_CUDA_GRAPHS=1`, is done); with graphs on, a column counts the graphs
captured in the whole run.
"""
import argparse
import gzip
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import conditions  # noqa: E402

SNLI_CONFIGS = {
    "snli_rte_conditional": "training_config/snli_rte_conditional.jsonnet",
    "snli_rte_attention": "training_config/snli_rte_attention.jsonnet",
    "snli_rte_word_by_word": "training_config/snli_rte_word_by_word.jsonnet",
    "snli_rte_two_way": "training_config/snli_rte_two_way.jsonnet",
    "snli_rte_shared": "training_config/snli_rte_shared.jsonnet",
    "snli_lstmn_no_fusion": "training_config/snli_lstmn_no_fusion.jsonnet",
    "snli_lstmn_shallow_fusion": "training_config/snli_lstmn_shallow_fusion.jsonnet",
    "snli_lstmn_deep_fusion": "training_config/snli_lstmn_deep_fusion.jsonnet",
    "snli_nse": "training_config/snli_nse.jsonnet",
    "snli_mma_nse": "training_config/snli_mma_nse.jsonnet",
    "snli_mma_nse_attention": "training_config/snli_mma_nse_attention.jsonnet",
    "snli_tree_lstm": "training_config/snli_tree_lstm.jsonnet",
    "esim (allennlp-models)": "benchmarks/replication/configs/snli_esim.jsonnet",
    "decomposable_attention (allennlp-models)": "benchmarks/replication/configs/snli_decomposable_attention.jsonnet",
}
SST_CONFIGS = {
    "sst2_tree_lstm": "training_config/sst2_tree_lstm.jsonnet",
    "sst2_nse": "training_config/sst2_nse.jsonnet",
    "sst_lstmn (2-class)": "training_config/sst_lstmn.jsonnet",
    "sst2_bilstm_baseline": "training_config/sst2_bilstm_baseline.jsonnet",
    "sst2_iram_vanilla": "training_config/sst2_iram_vanilla.jsonnet",
    "sst2_iram_full": "training_config/sst2_iram_full.jsonnet",
    "basic_classifier + lstm (allennlp-models)": "benchmarks/replication/configs/sst2_basic_classifier_lstm.jsonnet",
    "bcn (allennlp-models)": "benchmarks/replication/configs/sst2_bcn.jsonnet",
}


def seconds(duration: str) -> float:
    h, m, s = duration.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def training_params(config: str, args, amp: bool):
    """The config with this benchmark's settings: no validation, the epochs, batch size, AMP, loader workers."""
    from allennlp.common import Params

    params = Params.from_file(config)
    params.pop("validation_data_path", None)
    params["trainer"]["cuda_device"] = args.cuda_device
    params["trainer"]["use_amp"] = amp
    params["trainer"]["num_epochs"] = args.epochs
    params["trainer"].pop("patience", None)
    set_batch_size(params, args.batch_size)
    if args.num_workers:
        params["data_loader"]["num_workers"] = args.num_workers
    if args.data_loader:  # every config on one loader: AllenNLP's own, or memplugins' (the shipped configs')
        params["data_loader"]["type"] = args.data_loader
    if params["dataset_reader"].get("use_subtrees"):  # the same sentences for every config
        params["dataset_reader"]["use_subtrees"] = False
    return params


def last_epoch_seconds(serialization_dir: Path, epochs: int) -> float:
    """The last epoch's training time (the per-epoch metrics hold the time since training began)."""
    def elapsed(epoch: int) -> float:
        if epoch < 0:
            return 0.0
        metrics = json.loads((serialization_dir / f"metrics_epoch_{epoch}.json").read_text())
        return seconds(metrics["training_duration"])

    return elapsed(epochs - 1) - elapsed(epochs - 2)


def graph_captures() -> int:
    """CUDA graphs captured so far in this process by the LSTMN's and the NSE's loops."""
    from memplugins.modules.fast import lstmn, nse

    return lstmn._GRAPHS.captures + nse._GRAPHS.captures


def set_batch_size(params, batch_size: int) -> None:
    loader = params["data_loader"]
    if "batch_sampler" in loader:
        loader["batch_sampler"]["batch_size"] = batch_size
    else:
        loader["batch_size"] = batch_size


def loader_seconds(params, serialization_dir: str, cuda_device: int) -> float:
    """One pass of the config's training data loader over instances already read (its second pass), each batch
    moved to the device: what the epoch spends outside the model."""
    import time

    import torch
    from allennlp.data import DataLoader, DatasetReader, Vocabulary
    from allennlp.nn.util import move_to_device

    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    loader = DataLoader.from_params(params=params.pop("data_loader"), reader=reader,
                                    data_path=params.pop("train_data_path"))
    loader.index_with(Vocabulary.from_files(str(Path(serialization_dir) / "vocabulary")))
    device = torch.device("cuda", cuda_device) if cuda_device >= 0 else torch.device("cpu")
    for _ in loader.iter_instances():  # the first pass reads (as training does before its first epoch)
        pass
    started = time.perf_counter()
    for batch in loader:
        move_to_device(batch, device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--task", nargs="*", default=["snli", "sst"], choices=["snli", "sst"])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--cuda-device", type=int, default=-1)
    parser.add_argument("--amp", choices=["both", "on", "off"], default="both")
    parser.add_argument("--only", nargs="*", help="config names (default: all of the chosen tasks)")
    parser.add_argument("--conditions", nargs="*", default=["quiet"], help="quiet and/or busy (benchmarks/speed/load.py)")
    parser.add_argument("--loader", action="store_true", help="also time the data loader alone (see above)")
    parser.add_argument("--epochs", type=int, default=1, help="train this many epochs, report the last (see above)")
    parser.add_argument("--num-workers", type=int, default=0, help="data loader worker processes (see above)")
    parser.add_argument("--data-loader", choices=["multiprocess", "tensorized"],
                        help="every config's data loader type (default: each config's own; ours use tensorized)")
    args = parser.parse_args()
    data = Path(args.data).resolve()
    snli = data / "snli" / "snli_1.0_dev.jsonl.gz"
    sst = data / "sst" / "trees" / "train.txt"
    os.environ.update(SNLI_TRAIN=str(snli), SNLI_VALIDATION="", SST_TRAIN=str(sst), SST_VALIDATION="",
                      SST_GRANULARITY="2-class", EMBEDDING_DIM="50", NUM_EPOCHS="1",
                      GLOVE_PATH=str(data / "glove" / "glove.6B.50d.sst_snli-devtest.txt.gz"))
    os.chdir(ROOT)
    import logging

    import torch
    from allennlp.commands.train import train_model
    from allennlp.common.plugins import import_plugins

    import memplugins  # noqa: F401

    from memplugins.cli import keep_nltk_offline

    keep_nltk_offline()  # as the memplugins command: allennlp-models asks nltk to download at import
    import_plugins()
    logging.disable(logging.INFO)
    with gzip.open(snli, "rt", encoding="utf-8") as f:
        snli_instances = sum(1 for line in f if line.strip() and json.loads(line)["gold_label"] != "-")
    sst_instances = sum(1 for line in sst.read_text().splitlines() if line.strip() and line[1] != "2")
    cuda = args.cuda_device >= 0
    amps = {"both": [False, True], "on": [True], "off": [False]}[args.amp] if cuda else [False]
    where = torch.cuda.get_device_name(args.cuda_device) if cuda else f"cpu, {torch.get_num_threads()} threads"
    for condition in conditions(args.conditions):
        for task in args.task:
            configs, instances = (SNLI_CONFIGS, snli_instances) if task == "snli" else (SST_CONFIGS, sst_instances)
            names = [n for n in configs if args.only is None or n in args.only]
            if not names:
                continue
            what = f"SNLI dev ({instances} pairs)" if task == "snli" else f"SST train, binary ({instances} sentences)"
            epochs = "one epoch" if args.epochs == 1 else f"{args.epochs} epochs"
            print(f"\n{condition}: {epochs} of {what}, batch size {args.batch_size}, {where}, "
                  f"torch {torch.__version__}")
            from memplugins.modules.fast_path import backend

            graphs = backend.current().cuda_graphs  # the default (MEMPLUGINS_CUDA_GRAPHS=0 turns them off)
            print((f"(epoch {args.epochs} of {args.epochs})" if args.epochs > 1 else "")
                  + (f"(data loader workers: {args.num_workers})" if args.num_workers else ""))
            print("| config | AMP | instances/s | epoch s |" + (" peak GPU MB |" if cuda else "")
                  + (" loader alone s |" if args.loader else "") + (" graphs captured |" if graphs else ""))
            print("|---|---|---:|---:|" + ("---:|" if cuda else "") + ("---:|" if args.loader else "")
                  + ("---:|" if graphs else ""), flush=True)
            for name in names:
                for amp in amps:
                    if cuda:
                        torch.cuda.empty_cache()
                        torch.cuda.reset_peak_memory_stats(args.cuda_device)
                    params = training_params(configs[name], args, amp)
                    loader_params = params.duplicate()
                    captures_before = graph_captures()
                    with tempfile.TemporaryDirectory() as out:
                        train_model(params, out)
                        duration = last_epoch_seconds(Path(out), args.epochs)
                        loader = f" {loader_seconds(loader_params, out, args.cuda_device):.1f} |" if args.loader else ""
                    captured = f" {graph_captures() - captures_before} |" if graphs else ""
                    peak = f" {torch.cuda.max_memory_allocated(args.cuda_device) / 2**20:.0f} |" if cuda else ""
                    print(f"| {name} | {'on' if amp else 'off'} | {instances / duration:.0f} | {duration:.1f} |{peak}"
                          f"{loader}{captured}", flush=True)


if __name__ == "__main__":
    main()
