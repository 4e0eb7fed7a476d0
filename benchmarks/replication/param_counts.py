"""
Parameter counts |θ|_M (everything but the word embeddings) of the SNLI configs at the papers' sizes (300-d word
vectors), beside the counts the papers report, printed as a table:

    .venv/bin/python benchmarks/replication/param_counts.py

Models are built from the shipped configs (vocabulary from the shipped sample; the embedding matrix is excluded,
so its size does not matter) with EMBEDDING_DIM=300 and no pretrained file.
"""
import itertools
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ["EMBEDDING_DIM"] = "300"

import memplugins  # noqa: E402,F401
from allennlp.common import Params  # noqa: E402
from allennlp.data import DatasetReader, Vocabulary  # noqa: E402
from allennlp.models import Model  # noqa: E402

# config: (the paper's row, its |θ|_M, the source)
PAPER = {
    "snli_nse.jsonnet": ("NSE, d = 300", "3.4M", "Munkhdalai & Yu 2017, Table 1"),
    "snli_mma_nse.jsonnet": ("MMA-NSE, d = 300", "6.3M", "Munkhdalai & Yu 2017, Table 1"),
    "snli_mma_nse_attention.jsonnet": ("MMA-NSE attention, d = 300", "6.5M", "Munkhdalai & Yu 2017, Table 1"),
    "snli_rte_attention.jsonnet": ("attention, k = 100", "242K", "Munkhdalai & Yu 2017, Table 1 (from Rocktäschel et al.)"),
    "snli_rte_word_by_word.jsonnet": ("word-by-word attention, k = 100", "252K", "Munkhdalai & Yu 2017 and Cheng et al. 2016, Table 3"),
    "snli_rte_conditional.jsonnet": ("conditional encoding, k = 100", "-", "(not in our copies of the papers)"),
    "snli_rte_shared.jsonnet": ("conditional encoding, shared, k = 159", "-", "(not in our copies of the papers)"),
    "snli_rte_two_way.jsonnet": ("word-by-word two-way, k = 100", "-", "(not in our copies of the papers)"),
    "snli_lstmn_no_fusion.jsonnet": ("LSTMN, h = 100", "260k", "Cheng et al. 2016, Table 3"),
    "snli_lstmn_shallow_fusion.jsonnet": ("LSTMN shallow fusion, h = 100", "280k", "Cheng et al. 2016, Table 3"),
    "snli_lstmn_deep_fusion.jsonnet": ("LSTMN deep fusion, h = 100", "330k", "Cheng et al. 2016, Table 3"),
    "snli_tree_lstm.jsonnet": ("(tree LSTM pair classifier: no SNLI result in Le & Zuidema)", "-", ""),
}


def count(config: str, overrides: dict = None) -> int:
    params = Params.from_file(str(ROOT / "training_config" / config), json.dumps({
        "model.text_field_embedder.token_embedders.tokens.pretrained_file": None, **(overrides or {})}))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(itertools.islice(reader.read(params.pop("train_data_path")), 50))
    model = Model.from_params(vocab=Vocabulary.from_instances(instances), params=params.pop("model"))
    return sum(p.numel() for name, p in model.named_parameters() if "token_embedder" not in name)


def main() -> None:
    print("| config | paper's model | paper's |θ|_M | ours |θ|_M (300-d inputs) | source |")
    print("|---|---|---:|---:|---|")
    for config, (row, paper, source) in PAPER.items():
        print(f"| `{config}` | {row} | {paper} | {count(config) / 1e6:.3f}M | {source} |")


if __name__ == "__main__":
    main()
