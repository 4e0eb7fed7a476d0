"""
Decoding speed of the shared-memory NSE-NSE translation model against the LSTM-LSTM baseline (both at their
configs' sizes: 300 units, vocabularies from the same data), greedy (beam 1, which equals greedy decoding; see
tests/decoders) and beam 5, in one run with the measurements interleaved; prints sentences per second and the
NSE-NSE / LSTM-LSTM time ratio. Weights are untrained (decoding runs to `max_steps` = 50 unless an end token is
predicted), so the figures are a cost comparison, not a translation quality one.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/speed/decoding.py --data ../shared/data/iwslt14_de_en/test.de-en
        [--conditions quiet busy]

`--conditions busy` measures while a second single-thread process competes for the machine (`benchmarks/speed/load.py`).
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model

import memplugins  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import conditions  # noqa: E402
CONFIGS = {"nse_nse": "training_config/iwslt14_nse_nse.jsonnet", "lstm_lstm": "training_config/iwslt14_lstm_lstm.jsonnet"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT / "fixtures" / "iwslt14" / "sample.de-en"), help="PREFIX of .en/.de")
    parser.add_argument("--sentences", type=int, default=256)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--conditions", nargs="*", default=["quiet"], help="quiet and/or busy (benchmarks/speed/load.py)")
    args = parser.parse_args()
    torch.manual_seed(0)
    models = {}
    for name, config in CONFIGS.items():
        params = Params.from_file(str(ROOT / config))
        reader = DatasetReader.from_params(params.pop("dataset_reader"))
        instances = list(reader.read(args.data))[: args.sentences]
        vocab = Vocabulary.from_instances(instances)
        model_params = params.pop("model")
        model_params["source_text_embedder"]["token_embedders"]["tokens"].pop("pretrained_file")  # random: speed only
        model = Model.from_params(vocab=vocab, params=model_params).eval()
        batches = []
        for start in range(0, len(instances), args.batch):
            batch = Batch([i for i in instances[start : start + args.batch]])
            batch.index_instances(vocab)
            batches.append(batch.as_tensor_dict()["source_tokens"])
        models[name] = (model, batches)
    for condition in conditions(args.conditions):
        times = {(name, beam): [] for name in models for beam in (1, 5)}
        steps = {}  # decoder steps per batch (untrained models may stop early, and differently)
        with torch.no_grad():
            for _ in range(args.repeats):
                for beam in (1, 5):
                    for name, (model, batches) in models.items():
                        model._decoder._beam_search.beam_size = beam
                        started = time.perf_counter()
                        decoded = []
                        for source in batches:
                            decoded.append(model(source_tokens=source)["predictions"].size(-1))
                        times[(name, beam)].append(time.perf_counter() - started)
                        steps[(name, beam)] = statistics.mean(decoded)
        count = sum(len(b["tokens"]["tokens"]) for b in models["nse_nse"][1])
        print(f"\n{condition}: {count} sentences from {Path(args.data).name}, batch {args.batch}, max 50 steps, "
              f"untrained weights, median of {args.repeats}, torch {torch.__version__}, "
              f"threads={torch.get_num_threads()}")
        print("| decoding | nse_nse sentences/s | lstm_lstm sentences/s | nse_nse time / lstm_lstm time "
              "| decoder steps per batch (nse_nse / lstm_lstm) |")
        print("|---|---:|---:|---:|---|")
        for beam in (1, 5):
            nse, lstm = statistics.median(times[("nse_nse", beam)]), statistics.median(times[("lstm_lstm", beam)])
            label = "greedy (beam 1)" if beam == 1 else f"beam {beam}"
            print(f"| {label} | {count / nse:.1f} | {count / lstm:.1f} | {nse / lstm:.2f} "
                  f"| {steps[('nse_nse', beam)]:.1f} / {steps[('lstm_lstm', beam)]:.1f} |")


if __name__ == "__main__":
    main()
