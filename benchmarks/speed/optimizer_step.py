"""
How much of a training step the optimizer takes, torch's default per-parameter loop against `foreach` and `fused`
(which memplugins.compat.optimizer_options lets AllenNLP configs set), not part of CI. For each config: its own
reader on the real training data (the vocabulary, hence the embedding, as `allennlp train` builds it), its model,
its optimizer and its batch size, then training steps in blocks that rotate over the three optimizer settings (one
process, one model, so the figures share the machine's state), timed as forward + backward and as the optimizer
step. Prints a table of median milliseconds per step.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/speed/optimizer_step.py --data ../shared/data [--only sst_lstmn ...]
        [--steps 300]
"""
import argparse
import itertools
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = {
    # name: (config, the ext vars it needs beyond the shared ones)
    "sst_lstmn": ("training_config/sst_lstmn.jsonnet", {"SST_GRANULARITY": "2-class", "LSTMN_LAYERS": "1"}),
    "sst2_nse": ("training_config/sst2_nse.jsonnet", {}),
    "sst2_iram_full": ("training_config/sst2_iram_full.jsonnet", {}),
    "sst5_tree_lstm": ("training_config/sst5_tree_lstm.jsonnet", {}),
    "snli_lstmn_deep_fusion": ("training_config/snli_lstmn_deep_fusion.jsonnet", {}),
    "snli_mma_nse": ("training_config/snli_mma_nse.jsonnet", {}),
    "snli_rte_word_by_word": ("training_config/snli_rte_word_by_word.jsonnet", {}),
}
SETTINGS = {"default": {}, "foreach": {"foreach": True}, "fused": {"fused": True}}
BLOCK = 10  # steps per setting before rotating


def batch_size(params) -> int:
    loader = params["data_loader"]
    return loader.get("batch_sampler", loader).get("batch_size")


def measure(name: str, steps: int) -> dict:
    from allennlp.common import Params
    from allennlp.data import Batch, DatasetReader, Vocabulary
    from allennlp.data.samplers import BucketBatchSampler
    from allennlp.models import Model
    from allennlp.training.optimizers import Optimizer

    config, variables = CONFIGS[name]
    os.environ.update(variables)
    params = Params.from_file(str(ROOT / config))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(params.pop("train_data_path")))
    vocabulary = Vocabulary.from_instances(instances)
    model = Model.from_params(vocab=vocabulary, params=params.pop("model"))
    model.train()
    optimizer_params = params["trainer"]["optimizer"].as_dict()
    optimizer_params.pop("fused", None)
    optimizer_params.pop("foreach", None)
    trained = [[n, p] for n, p in model.named_parameters() if p.requires_grad]
    optimizers = {
        setting: Optimizer.from_params(model_parameters=trained, params=Params({**optimizer_params, **options}))
        for setting, options in SETTINGS.items()
    }
    size = batch_size(params)
    random.seed(0)
    sample = random.sample(instances, min(len(instances), size * (steps + BLOCK)))
    for instance in sample:
        instance.index_fields(vocabulary)
    batches = [[sample[i] for i in indices] for indices in BucketBatchSampler(batch_size=size).get_batch_indices(sample)]
    random.shuffle(batches)
    times = {setting: {"model": [], "step": []} for setting in SETTINGS}
    rotation = itertools.cycle(SETTINGS)
    setting = next(rotation)
    for number, batch in enumerate(batches[: steps + BLOCK]):
        if number % BLOCK == 0 and number:
            setting = next(rotation)
        tensors = Batch(batch).as_tensor_dict()
        started = time.perf_counter()
        model.zero_grad(set_to_none=True)
        model(**tensors)["loss"].backward()
        computed = time.perf_counter()
        optimizers[setting].step()
        stepped = time.perf_counter()
        if number >= BLOCK:  # the first block warms up
            times[setting]["model"].append(computed - started)
            times[setting]["step"].append(stepped - computed)
    medians = {s: {k: statistics.median(v) * 1e3 for k, v in t.items()} for s, t in times.items()}
    return {
        "batch": size, "parameters": sum(p.numel() for _, p in trained),
        "embedding": max(p.numel() for _, p in trained), "optimizer": optimizer_params["type"], "ms": medians,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--only", nargs="*", choices=sorted(CONFIGS))
    parser.add_argument("--steps", type=int, default=300, help="timed steps per config, over the three settings")
    args = parser.parse_args()
    data = Path(args.data).resolve()
    os.environ.update(
        SST_TRAIN=str(data / "sst" / "trees" / "train.txt"), SST_VALIDATION="", SNLI_VALIDATION="",
        SNLI_TRAIN=str(data / "snli" / "snli_1.0_dev.jsonl.gz"), EMBEDDING_DIM="50", NUM_EPOCHS="1", CUDA_DEVICE="-1",
        GLOVE_PATH=str(data / "glove" / "glove.6B.50d.sst_snli-devtest.txt.gz"),
    )
    os.chdir(ROOT)
    import logging

    import torch
    from allennlp.common.plugins import import_plugins

    sys.path.insert(0, str(ROOT))
    import memplugins  # noqa: F401
    from memplugins.cli import keep_nltk_offline

    keep_nltk_offline()
    import_plugins()
    logging.disable(logging.INFO)
    print(f"cpu, {torch.get_num_threads()} threads, torch {torch.__version__}; median ms per training step, "
          f"blocks of {BLOCK} steps rotating over the settings")
    print("| config | optimizer | batch | trained parameters (largest) | forward + backward | step: default | "
          "foreach | fused | step default / fused | whole step default / fused |")
    print("(whole step: forward + backward, their mean over the settings, plus each setting's optimizer step)")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    for name in args.only or CONFIGS:
        result = measure(name, args.steps)
        ms = result["ms"]
        model = statistics.mean(ms[s]["model"] for s in SETTINGS)
        # the settings share one model, so its time is their mean (each setting's own median is noisier)
        whole = (model + ms["default"]["step"]) / (model + ms["fused"]["step"])
        print(f"| {name} | {result['optimizer']} | {result['batch']} | {result['parameters'] / 1e6:.2f}M "
              f"({result['embedding'] / 1e6:.2f}M) | {model:.1f} | {ms['default']['step']:.1f} | "
              f"{ms['foreach']['step']:.1f} | {ms['fused']['step']:.1f} | "
              f"{ms['default']['step'] / ms['fused']['step']:.1f}x | {whole:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
