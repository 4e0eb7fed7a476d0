"""
Writes `memplugins/modelcards/<config>.json`, one model card per shipped config, in allennlp-models' `ModelCard`
format (`allennlp.common.model_card`): what the model is, its paper, task, data, the metric we measured and where,
intended use, and known deviations (the config's header, which states them). The measured figures come from
`benchmarks/replication/results.jsonl` as `benchmarks/replication/render.py` summarises them (the rows that
`verdicts.json` shows for the config, else the config's row with the most seeds), else from the budget-limited runs
of earlier sessions named below. Run it after a config or a result changes (a test fails while a card is stale):

    .venv/bin/python scripts/make_model_cards.py
"""
import json
import statistics
import sys
from pathlib import Path

from memplugins.cli import config_header, config_summary  # (importing memplugins gives the configs' variables their defaults)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks" / "replication"))
import render  # noqa: E402  (benchmarks/ is not a package)

PAPERS = {
    "lstmn": ("Long Short-Term Memory-Networks for Machine Reading", "Cheng, Dong and Lapata", "EMNLP 2016",
              "https://aclanthology.org/D16-1053/",
              "@inproceedings{cheng2016long, title={Long Short-Term Memory-Networks for Machine Reading}, "
              "author={Cheng, Jianpeng and Dong, Li and Lapata, Mirella}, booktitle={EMNLP}, year={2016}}"),
    "nse": ("Neural Semantic Encoders", "Munkhdalai and Yu", "EACL 2017", "https://aclanthology.org/E17-1038/",
            "@inproceedings{munkhdalai2017neural, title={Neural Semantic Encoders}, author={Munkhdalai, Tsendsuren "
            "and Yu, Hong}, booktitle={EACL}, year={2017}}"),
    "tree": ("Compositional Distributional Semantics with Long Short Term Memory", "Le and Zuidema", "*SEM 2015",
             "https://aclanthology.org/S15-1002/",
             "@inproceedings{le2015compositional, title={Compositional Distributional Semantics with Long Short Term "
             "Memory}, author={Le, Phong and Zuidema, Willem}, booktitle={*SEM}, year={2015}}"),
    "iram": ("Iterative Recursive Attention Model for Interpretable Sequence Classification", "Tutek and Šnajder",
             "BlackboxNLP 2018", "https://aclanthology.org/W18-5427/",
             "@inproceedings{tutek2018iterative, title={Iterative Recursive Attention Model for Interpretable "
             "Sequence Classification}, author={Tutek, Martin and {\\v{S}}najder, Jan}, booktitle={BlackboxNLP}, "
             "year={2018}}"),
    "rte": ("Reasoning about Entailment with Neural Attention", "Rocktäschel et al.", "ICLR 2016",
            "https://arxiv.org/abs/1509.06664",
            "@inproceedings{rocktaschel2016reasoning, title={Reasoning about Entailment with Neural Attention}, "
            "author={Rockt{\\\"a}schel, Tim and Grefenstette, Edward and Hermann, Karl Moritz and Ko{\\v{c}}isk{\\'y}, "
            "Tom{\\'a}{\\v{s}} and Blunsom, Phil}, booktitle={ICLR}, year={2016}}"),
}

DATA = {
    "snli": ("Stanford Natural Language Inference (SNLI) 1.0", "https://nlp.stanford.edu/projects/snli/",
             "textual_entailment", "accuracy", "SNLI_TRAIN / SNLI_VALIDATION: SNLI .jsonl(.gz) files"),
    "sst": ("Stanford Sentiment Treebank (PTB-format trees)", "https://nlp.stanford.edu/sentiment/",
            "sentiment_analysis", "accuracy (sentence level)", "SST_TRAIN / SST_VALIDATION: trees/{train,dev}.txt"),
    "ptb": ("Penn Treebank (Mikolov's LM version)", "https://www.fit.vutbr.cz/~imikolov/rnnlm/",
            "language_modeling", "perplexity (token-weighted: benchmarks/replication/ptb_token_perplexity.py)",
            "PTB_TRAIN / PTB_VALIDATION: ptb.{train,valid}.txt"),
    "wikiqa": ("WikiQA", "https://www.microsoft.com/en-us/download/details.aspx?id=52419", "answer_selection",
               "MAP and MRR over questions with a correct answer", "WIKIQA_TRAIN / WIKIQA_VALIDATION"),
    "iwslt14": ("IWSLT 2014 German-English (MIXER preparation)", "https://wit3.fbk.eu/", "machine_translation",
                "BLEU", "IWSLT_TRAIN / IWSLT_VALIDATION: file prefixes of .en / .de"),
    "yelp13": ("Yelp 2013 / IMDB documents (Tang et al. 2015 format)", "https://aclanthology.org/P15-1098/",
               "document_classification", "accuracy and mse", "YELP_TRAIN / YELP_VALIDATION: .ss files"),
}

# budget-limited figures measured in earlier sessions (docs/results.md), for configs without a protocol row yet
MEASURED = {
    "snli_rte_conditional": "SNLI test accuracy 58.8 % (trained on SNLI dev, 10 epochs, GloVe 6B 50d)",
    "snli_rte_attention": "SNLI test accuracy 58.6 % (trained on SNLI dev, 10 epochs, GloVe 6B 50d)",
    "snli_rte_word_by_word": "SNLI test accuracy 58.6 % (trained on SNLI dev, 10 epochs, GloVe 6B 50d)",
    "snli_rte_two_way": "SNLI test accuracy 58.9 % (trained on SNLI dev, 10 epochs, GloVe 6B 50d)",
    "snli_rte_shared": "SNLI test accuracy 57.6 % (trained on SNLI dev, 10 epochs, GloVe 6B 50d)",
    "snli_lstmn_no_fusion": "SNLI test accuracy 60.1 % (trained on SNLI dev, 10 epochs, GloVe 6B 50d)",
    "snli_lstmn_shallow_fusion": "SNLI test accuracy 61.8 % (trained on SNLI dev, 10 epochs, GloVe 6B 50d)",
    "snli_lstmn_deep_fusion": "SNLI test accuracy 61.8 % (trained on SNLI dev, 10 epochs, GloVe 6B 50d)",
    "snli_nse": "SNLI test accuracy 55.8 % (trained on SNLI dev for 10 minutes, GloVe 6B 50d)",
    "snli_mma_nse": "SNLI test accuracy 56.9 % (trained on SNLI dev for 10 minutes, GloVe 6B 50d)",
    "snli_mma_nse_attention": "SNLI test accuracy 56.1 % (trained on SNLI dev for 10 minutes, GloVe 6B 50d)",
    "sst5_tree_lstm": "SST fine-grained test accuracy 48.4 % (best-dev of 3 seeds, 12 epochs, GloVe 6B 50d)",
    "sst2_tree_lstm": "SST binary test accuracy 85.3 % (best-dev of 3 seeds, 12 epochs, GloVe 6B 50d)",
    "sst5_tree_rnn": "SST fine-grained test accuracy 45.3 % (best-dev of 3 seeds, 12 epochs, GloVe 6B 50d)",
    "sst2_iram_vanilla": "SST binary test accuracy 79.1 % (sentences only, 6 epochs, h = 150, GloVe 6B 50d)",
    "sst2_iram_full": "SST binary test accuracy 77.8 % (sentences only, 6 epochs, h = 150, GloVe 6B 50d)",
    "sst5_iram_full": "SST fine-grained test accuracy 40.5 % (sentences only, 6 epochs, h = 150, GloVe 6B 50d)",
    "sst2_bilstm_baseline": "SST binary test accuracy 78.2 % (sentences only, 6 epochs, h = 150, GloVe 6B 50d)",
    "sst2_nse": "SST binary test accuracy 73.2 % (12 minutes of training, GloVe 6B 50d)",
    "sst5_nse": "SST fine-grained test accuracy 35.8 % (12 minutes of training, GloVe 6B 50d)",
    "sst_lstmn": "SST fine-grained / binary test accuracy 41.0 % / 80.3 % (sentences, 3 epochs, GloVe 6B 50d)",
    "wikiqa_mma_nse_attention": "WikiQA test MAP 48.9 %, MRR 49.2 % (3,200 training pairs, GloVe 6B 50d)",
    "iwslt14_nse_nse": "IWSLT14 test BLEU 2.91 (trained on the 6,969 valid pairs, 12 epochs, 128 units)",
    "iwslt14_nse_lstm": "IWSLT14 test BLEU 2.86 (trained on the 6,969 valid pairs, 12 epochs, 128 units)",
    "iwslt14_lstm_lstm": "IWSLT14 test BLEU 2.49 (trained on the 6,969 valid pairs, 12 epochs, 128 units)",
    "ptb_lstmn_lm": "PTB test perplexity 567.0 after 25 minutes of training (1.7 epochs; the 20-epoch protocol run: "
                    "benchmarks/replication/replicate.py ptb_lm)",
}
NOT_MEASURED = {
    "snli_tree_lstm": "No test figure yet: no replication row trains the tree LSTM on SNLI. The config trains, "
                      "evaluates and predicts on the shipped sample (tests/configs).",
    "sst2_iram_full_char_cnn": "No test figure yet: the character-CNN variant has no replication row; sst2_iram_full, "
                               "the same model without it, has (its model card, docs/results.md).",
    "yelp13": "No accuracy measured: the Yelp 2013 and IMDB corpora are not obtainable offline here. The "
                           "config trains, evaluates and predicts on the shipped sample (tests/configs).",
}


def family(name: str) -> str:
    for key in ("lstmn", "nse", "tree", "iram", "bilstm"):
        if key in name:
            return "iram" if key == "bilstm" else key
    return "rte"


def model_type(path: Path) -> str:
    """The registered name of the config's model, as `allennlp train` reads the config."""
    from allennlp.common import Params

    return Params.from_file(str(path))["model"]["type"]


def measured_rows(name: str, results: list, verdicts: dict) -> list:
    """The rows of our results for config `name`: those `verdicts.json` shows (its headline), else the config's row
    with the most seeds; each as its seeds of one protocol (render.seeds_of)."""
    ours = [result for result in results if Path(result["config"]).stem == name and result["system"] == "ours"]
    if not ours:
        return []
    shown = [(family, setting["ours"]) for family, verdict in verdicts.items() for setting in verdict["headline"]
             if setting["ours"] in {result["row"] for result in ours}]
    if not shown:
        counts: dict = {}
        for result in ours:
            counts[result["row"]] = counts.get(result["row"], 0) + 1
        row = max(counts, key=lambda key: (counts[key], key))
        shown = [(next(result["family"] for result in ours if result["row"] == row), row)]
    return [(verdicts.get(family), render.seeds_of(results, family, row)) for family, row in shown]


def protocol_result(name: str):
    results = render.read_results(render.RESULTS)
    verdicts = json.loads(render.VERDICTS.read_text(encoding="utf-8"))
    lines = []
    for verdict, seeds in measured_rows(name, results, verdicts):
        figures = render.Figures(verdict["format"] if verdict else {"scale": 1, "digits": 4})
        unit = " %" if figures.scale == 100 and seeds[0]["metric"] == "accuracy" else ""
        values = [result["value"] for result in seeds]
        spread = (f"the best-dev pick of {len(seeds)} seeds; their mean {figures(statistics.mean(values))} ± "
                  f"{figures(statistics.stdev(values))}" if len(seeds) > 1 else "one seed")
        also = render.pick(seeds).get("also") or {}
        extra = "".join(f", {metric} {figures(value)}" for metric, value in also.items())
        lines.append(f"{seeds[-1]['label']}: test {seeds[0]['metric']} {figures(render.pick(seeds)['value'])}{unit}"
                     f"{extra} ({spread}; paper {figures.paper(seeds)}); {seeds[-1]['data']}")
    return "; ".join(lines) or None


def card(path: Path) -> dict:
    name = path.stem
    title, authors, venue, url, citation = PAPERS[family(name)]
    dataset, dataset_url, task, metric, variables = DATA[next(key for key in DATA if name.startswith(key))]
    description = config_header(path)
    measured = protocol_result(name) or MEASURED.get(name)
    return {
        "id": f"memplugins-{name}",
        "registered_model_name": model_type(path),
        "registered_predictor_name": None,
        "display_name": f"{name} ({authors}, {venue})",
        "task_id": task,
        "model_details": {
            "description": description,
            "short_description": config_summary(path),
            "developed_by": authors,
            "contributed_by": "memplugins",
            "date": "2026-11-23",
            "version": "1",
            "model_type": family(name),
            "paper": {"citation": citation, "title": title, "url": url},
            "license": "Apache-2.0 (the code); the data's own licences apply to trained models",
            "contact": None,
        },
        "intended_use": {
            "primary_uses": f"Research on {task.replace('_', ' ')}: reproducing and comparing {authors}'s model, and "
                            "inspecting its attention / memory (memplugins attention-map).",
            "primary_users": "NLP researchers and engineers using AllenNLP.",
            "out_of_scope_use_cases": "Decisions about people; any production use without evaluation on the "
                                      "target data. No trained weights are shipped: train with `memplugins train "
                                      f"{name}` on your data.",
        },
        "factors": {"relevant_factors": None, "evaluation_factors": None},
        "metrics": {"model_performance_measures": metric, "decision_thresholds": None, "variation_approaches": None},
        "evaluation_data": {"dataset": {"name": dataset, "url": dataset_url, "processed_url": None},
                            "motivation": None, "preprocessing": variables},
        "training_data": {"dataset": {"name": dataset, "url": dataset_url, "processed_url": None},
                          "motivation": None, "preprocessing": variables},
        "quantitative_analyses": {
            "unitary_results": (measured + ". docs/results.md has the protocol and the command that "
                                "reproduces it.") if measured else NOT_MEASURED.get(name, NOT_MEASURED.get(name.split("_")[0])),
            "intersectional_results": None,
        },
        "model_ethical_considerations": {"ethical_considerations": None},
        "model_caveats_and_recommendations": {
            "caveats_and_recommendations": "Deviations from the paper are listed in the config's header (above) and "
                                           "in docs/configs.md; the figures measured here use GloVe 6B 50d and, for "
                                           "SNLI and IWSLT14, the dev / valid split as training data (the only data "
                                           "available offline), so they are not the paper's setting.",
        },
    }


def main() -> None:
    folder = ROOT / "memplugins" / "modelcards"
    folder.mkdir(exist_ok=True)
    for path in sorted((ROOT / "training_config").glob("*.jsonnet")):
        (folder / f"{path.stem}.json").write_text(json.dumps(card(path), indent=2, ensure_ascii=False) + "\n")
        print(f"memplugins/modelcards/{path.stem}.json")


if __name__ == "__main__":
    main()
