"""
The host work of an SNLI training epoch outside the model, side by side in one process: AllenNLP's `multiprocess`
loader with AllenNLP's `move_to_device` (what a config gets without memplugins) against memplugins' `tensorized`
loader with its `move_to_device`. Not part of CI.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/speed/host_work.py [--data ../shared/data] [--config snli_mma_nse]
        [--batch-size 32] [--repeats 5]

Two tables, each a median over `--repeats` alternating runs (the machine is noisy; ratios are within this run):

* loader: one epoch of the data loader alone after the first (reading is cached from then on, as in training):
  batch indices, tensorising, padding, batching and the move to the device (the CPU here);
* epoch: `allennlp train`'s own loop over the same epoch with a stub model (one parameter, a constant loss), so
  what is timed is the loader plus the trainer's per-batch work (zero_grad, backward, the optimizer step, metrics,
  the progress bar, the TensorBoard callback of the shipped configs), never the model. Epoch 2 of 3 is timed.

Both loaders give the same batches (`tests/data_loaders/tensorized_test.py`); this script checks it once too.
"""
import argparse
import copy
import json
import logging
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--config", default="snli_mma_nse")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    os.environ["SNLI_TRAIN"] = str(Path(args.data) / "snli" / "snli_1.0_dev.jsonl.gz")
    os.environ.setdefault("SNLI_VALIDATION", str(ROOT / "fixtures" / "snli" / "snli_1.0_dev_sample_validation.jsonl"))

    import torch
    from allennlp.common import Params
    from allennlp.commands.train import train_model_from_file
    from allennlp.data import DataLoader, DatasetReader, Vocabulary
    from allennlp.models import Model
    from allennlp.nn import util as nn_util

    import memplugins  # noqa: F401
    from memplugins.compat.patching import original_of

    logging.disable(logging.INFO)
    config = ROOT / "training_config" / f"{args.config}.jsonnet"
    ours_move = nn_util.move_to_device
    allennlp_move = original_of(ours_move)
    sides = {"allennlp (multiprocess)": ("multiprocess", allennlp_move), "memplugins (tensorized)": ("tensorized",
                                                                                                    ours_move)}

    @Model.register("host_work_stub")
    class Stub(Model):
        def __init__(self, vocab, **kwargs) -> None:
            super().__init__(vocab)
            self.weight = torch.nn.Parameter(torch.zeros(1))

        def forward(self, **inputs):
            return {"loss": self.weight.square().sum()}

    params = Params.from_file(str(config))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    loader_params = params.pop("data_loader").as_dict()
    sampler = loader_params.get("batch_sampler")
    (sampler if sampler is not None else loader_params)["batch_size"] = args.batch_size
    loaders = {}
    for side, (kind, _) in sides.items():
        loaders[side] = DataLoader.from_params(Params({**copy.deepcopy(loader_params), "type": kind}), reader=reader,
                                               data_path=os.environ["SNLI_TRAIN"])
    instances = list(next(iter(loaders.values())).iter_instances())
    vocab = Vocabulary.from_instances(instances)
    for loader in loaders.values():
        loader._instances = instances
        loader.index_with(vocab)

    def loader_epoch(side: str) -> float:
        move = sides[side][1]
        start = time.perf_counter()
        for batch in loaders[side]:
            move(batch, -1)
        return time.perf_counter() - start

    def training_epoch(side: str) -> float:
        kind, move = sides[side]
        nn_util.move_to_device = move
        out = tempfile.mkdtemp()
        overrides = {"model": {"type": "host_work_stub"}, "trainer.num_epochs": 3, "validation_data_path": None,
                     "trainer.validation_metric": "-loss", "data_loader.type": kind}
        overrides["data_loader.batch_sampler.batch_size" if sampler is not None else "data_loader.batch_size"] = \
            args.batch_size
        try:
            train_model_from_file(str(config), out, overrides=json.dumps(overrides))
        finally:
            nn_util.move_to_device = ours_move
        durations = [_seconds(json.loads(Path(out, f"metrics_epoch_{n}.json").read_text())["training_duration"])
                     for n in (1, 2)]
        return durations[1] - durations[0]  # AllenNLP's training_duration is cumulative

    for side in sides:  # the first epoch of each (it builds the caches), untimed
        loader_epoch(side)
    random.seed(0)
    first = [nn_util.move_to_device(batch, -1) for batch in loaders["allennlp (multiprocess)"]]
    random.seed(0)
    second = [nn_util.move_to_device(batch, -1) for batch in loaders["memplugins (tensorized)"]]
    same = len(first) == len(second) and all(_same(a, b) for a, b in zip(first, second))

    timings = {side: {"loader": [], "epoch": []} for side in sides}
    for _ in range(args.repeats):
        for side in sides:
            timings[side]["loader"].append(loader_epoch(side))
        for side in sides:
            timings[side]["epoch"].append(training_epoch(side))

    print(f"\n{args.config}: SNLI dev ({len(instances)} pairs), batch {args.batch_size}, {len(first)} batches, CPU, "
          f"torch {torch.__version__}, threads {torch.get_num_threads()}, median of {args.repeats}; "
          f"same batches: {same}")
    print("| host work per epoch | allennlp (multiprocess) s | memplugins (tensorized) s | speed-up |")
    print("|---|---:|---:|---:|")
    for what, label in (("loader", "data loader alone"), ("epoch", "allennlp train, stub model")):
        base = statistics.median(timings["allennlp (multiprocess)"][what])
        ours = statistics.median(timings["memplugins (tensorized)"][what])
        print(f"| {label} | {base:.3f} | {ours:.3f} | {base / ours:.1f}x |")
    if not same:
        sys.exit("the two loaders gave different batches")


def _seconds(text: str) -> float:
    hours, minutes, seconds = text.split(":")
    return 3600 * int(hours) + 60 * int(minutes) + float(seconds)


def _same(a, b) -> bool:
    import torch

    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


if __name__ == "__main__":
    main()
