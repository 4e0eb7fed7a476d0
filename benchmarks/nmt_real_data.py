"""
Real-data run for the shared-memory NMT models (issue: NMT), not part of CI: IWSLT14 English -> German (the
paper's direction), the three configs trained on the IWSLT14 *valid* split (6,969 pairs, 25-word filter; the train
split is not available here) for the same number of epochs (`--epochs`), then BLEU on the *test* split (6,750
pairs, the same filter) by `allennlp evaluate` (greedy decoding, as the paper; allennlp's BLEU, 4-gram, over
token ids, without the start/end symbols). GloVe 6B 50d fixed for the English source (paper: 300d 840B).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/nmt_real_data.py --data ../shared/data --epochs 5
"""
import argparse
import os
from pathlib import Path

# benchmarks/ is this file's folder
from runs import ROOT, count_parameters, epochs_and_seconds, evaluate, train, write_table


def overrides(name: str, args) -> dict:
    """Smaller and more frequent updates than the configs, so that a CPU budget learns something (see caption)."""
    h = args.hidden
    decoder_net = ({"type": "nse", "decoding_dim": h, "target_embedding_dim": h, "dropout": 0.3} if name == "nse_nse"
                   else {"type": "lstm_cell", "decoding_dim": h, "target_embedding_dim": h,
                         "attention": {"type": "additive", "vector_dim": h, "matrix_dim": h}})
    return {"model.encoder.hidden_size": h, "model.decoder.decoder_net": decoder_net,
            "model.decoder.target_embedder.embedding_dim": h,
            "data_loader.batch_sampler.batch_size": args.batch,
            "vocabulary": {"min_count": {"target_tokens": args.min_count}}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "nmt"))
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=["lstm_lstm", "nse_lstm", "nse_nse"])
    parser.add_argument("--hidden", type=int, default=128, help="units (the configs: 300)")
    parser.add_argument("--batch", type=int, default=32, help="batch size (the configs: 128)")
    parser.add_argument("--min-count", type=int, default=2, help="target words seen fewer times become UNK")
    args = parser.parse_args()
    corpus = Path(args.data) / "iwslt14_de_en"
    env = {**os.environ, "IWSLT_TRAIN": str(corpus / "valid.de-en"), "IWSLT_VALIDATION": "",
           "GLOVE_PATH": str(Path(args.data) / "glove" / "glove.6B.50d.top100k.txt.gz"), "EMBEDDING_DIM": "50",
           "NUM_EPOCHS": str(args.epochs), "BEAM_SIZE": "1"}
    paper = {"lstm_lstm": "17.02", "nse_lstm": "17.13", "nse_nse": "17.93"}
    lines = [f"IWSLT14 en->de, trained on valid (6,969 pairs, <= 25 words), {args.epochs} epochs each, BLEU on test "
             f"(greedy); GloVe 6B 50d fixed source embeddings; {args.hidden} units and batch {args.batch} (configs: "
             f"300, 128), target words seen < {args.min_count} times as UNK",
             "| model | test BLEU | paper (full train set) | s / epoch | params excl. source embeddings |",
             "|---|---:|---:|---:|---:|"]
    for name in args.only:
        out = Path(args.out) / name
        train(f"training_config/iwslt14_{name}.jsonnet", out, env, overrides(name, args))
        test = evaluate(out / "model.tar.gz", str(corpus / "test.de-en"), env)
        epochs, seconds = epochs_and_seconds(out)
        lines.append(f"| {name} | {100 * test['BLEU']:.2f} | {paper[name]} | {seconds / max(epochs, 1):.0f} | "
                     f"{count_parameters(out / 'model.tar.gz', exclude='_source_text_embedder')[0]:,} |")
        print(lines[-1], flush=True)
    write_table(lines, Path(args.out))


if __name__ == "__main__":
    main()
