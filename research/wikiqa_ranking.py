"""
How far a trained WikiQA answer-selection run's MAP / MRR can be trusted, what simple rankers reach on the same
questions, and whether our evaluation is the standard one. For each FILE (WikiQA-dev.tsv, WikiQA-test.tsv) it scores
every candidate with RUN's best weights and prints, over the questions that have a correct answer (the standard
evaluation, `memplugins.metrics.MapMrr`), MAP and MRR with a percentile bootstrap interval over questions
(`--resamples`, a fixed seed) and the share of resamples that reach `--paper` (the paper's test MAP / MRR, .6811 /
.6993 for MMA-NSE attention), for

* the model;
* document order: the candidates as the file lists them, which is their order in the Wikipedia summary, and a
  random order (every candidate the same score: `MapMrr`'s expectation over the orders of a tie);
* the two lexical baselines of the corpus paper (Yang et al. 2015, Table 3: "Word Cnt" .4891 / .4924 and "Wgt Word
  Cnt" .5099 / .5132 on test): the number of distinct question words, spaCy's English stop words left out, that
  occur in the candidate, plain and weighted by each word's IDF over the distinct candidate sentences of the FILEs.
  Their scores tie often, so each is given twice: ties broken later candidate first, as trec_eval does (it breaks
  ties by descending document id, and WikiQA's sentence ids number the sentences in order), and as `MapMrr` scores
  ties, the expectation over their orders. Near their published figures with trec_eval's rule, they say that our
  data, question filter and MAP are the standard ones;

and the model's per-question lead over document order and over the weighted count, with bootstrap intervals, and
the share of questions on which the model ranks the first sentence on top (against the share on which it is a
correct answer). The model's scores are continuous; the table says on how many questions two of its candidates tie.

RUN is a serialization directory with `config.json`, `vocabulary/` and `best.th` (a `benchmarks/replication/replicate.py` run's
`train/`).

    OMP_NUM_THREADS=1 .venv/bin/python research/wikiqa_ranking.py RUN \\
        ../shared/data/wikiqa/WikiQACorpus/WikiQA-dev.tsv ../shared/data/wikiqa/WikiQACorpus/WikiQA-test.tsv

Run it with `OMP_NUM_THREADS=1` beside training processes (torch's intra-op threads contend with them). About 2
minutes for dev and 5 for test on one core with the paper's MMA-NSE settings; `--no-model` prints the rankers that
need no weights in seconds.
"""
import argparse
import math
import random
import sys
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import torch
from allennlp.common.util import import_module_and_submodules
from allennlp.data import Instance
from allennlp.models import Model

from memplugins.metrics import MapMrr
from sst_accuracy_by_length import load_run, validation_reader  # research/: this file's folder

PAPER = (0.6811, 0.6993)  # Munkhdalai and Yu 2017, Table 2, MMA-NSE attention, WikiQA test MAP / MRR


def model_scores(model: Model, instances: List[Instance], batch_size: int) -> List[float]:
    scores: List[float] = []
    for start in range(0, len(instances), batch_size):
        outputs = model.forward_on_instances(instances[start:start + batch_size])
        scores.extend(float(output["probability"]) for output in outputs)
    return scores


def content_words(tokens: Sequence[str], stop_words: set) -> set:
    return {token.lower() for token in tokens if token.lower() not in stop_words and any(c.isalnum() for c in token)}


def word_count_scores(pairs: List[Tuple[set, set]], idf: Dict[str, float]) -> Tuple[List[float], List[float]]:
    """Yang et al. 2015's Word Cnt and Wgt Word Cnt: the question's content words found in the candidate."""
    plain, weighted = [], []
    for question, answer in pairs:
        shared = question & answer
        plain.append(float(len(shared)))
        weighted.append(sum(idf.get(word, 0.0) for word in shared))
    return plain, weighted


def per_question(scores: Sequence[float], labels: Sequence[int], question_ids: Sequence[str]) -> Dict[str, tuple]:
    metric = MapMrr()
    metric(torch.tensor(scores, dtype=torch.float64), torch.tensor(labels), list(question_ids))
    return metric.per_question()


def bootstrap(terms: Dict[str, tuple], resamples: int, seed: int, reference: Dict[str, tuple] = None,
              targets: Tuple[float, float] = None) -> dict:
    """Percentile intervals of MAP and MRR (or, with `reference`, of the lead over it) over questions drawn with
    replacement; with `targets`, the share of resamples at or above each."""
    keys = sorted(terms)
    rng = random.Random(seed)
    maps, mrrs = [], []
    for _ in range(resamples):
        drawn = [keys[rng.randrange(len(keys))] for _ in keys]
        ap = [terms[k][0] - (reference[k][0] if reference else 0.0) for k in drawn]
        rr = [terms[k][1] - (reference[k][1] if reference else 0.0) for k in drawn]
        maps.append(sum(ap) / len(ap))
        mrrs.append(sum(rr) / len(rr))
    maps.sort()
    mrrs.sort()

    def interval(values):
        return values[int(0.025 * len(values))], values[min(len(values) - 1, int(math.ceil(0.975 * len(values))) - 1)]

    result = {"MAP": interval(maps), "MRR": interval(mrrs)}
    if targets:
        result["reach"] = (sum(v >= targets[0] for v in maps) / resamples,
                           sum(v >= targets[1] for v in mrrs) / resamples)
    return result


def first_sentence_shares(scores, labels, question_ids, positions) -> Tuple[float, float, int]:
    """Over the questions with a correct answer: the share whose top-scored candidate is the first sentence, the
    share whose first sentence is correct, and the number of questions."""
    top: Dict[str, tuple] = {}
    first_correct: Dict[str, int] = {}
    answered = set()
    for score, label, question_id, position in zip(scores, labels, question_ids, positions):
        if label:
            answered.add(question_id)
        if position == 0:
            first_correct[question_id] = label
        if question_id not in top or score > top[question_id][0]:
            top[question_id] = (score, position)
    count = len(answered)
    return (sum(top[q][1] == 0 for q in answered) / count, sum(first_correct[q] for q in answered) / count, count)


def means(terms: Dict[str, tuple]) -> Tuple[float, float]:
    return (sum(t[0] for t in terms.values()) / len(terms), sum(t[1] for t in terms.values()) / len(terms))


def main(argv: List[str] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="serialization directory with config.json, vocabulary/, best.th")
    parser.add_argument("files", nargs="+", help="WikiQA .tsv files, e.g. WikiQA-dev.tsv WikiQA-test.tsv")
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--paper", type=float, nargs=2, default=PAPER, metavar=("MAP", "MRR"))
    parser.add_argument("--no-model", action="store_true", help="only the lexical baselines (no RUN weights read)")
    args = parser.parse_args(argv)
    import_module_and_submodules("memplugins")
    from spacy.lang.en.stop_words import STOP_WORDS  # shipped with spaCy itself: no model download

    for name in ("config.json",) if args.no_model else ("config.json", "best.th"):
        if not (args.run / name).is_file():
            sys.exit(f"{args.run}: no {name} (a serialization directory, e.g. a replicate.py run's train/)")
    model = None if args.no_model else load_run(args.run)
    reader = validation_reader(args.run)

    data = {}
    for path in args.files:
        instances = list(reader.read(path))
        metadata = [instance["metadata"].metadata for instance in instances]
        data[path] = dict(
            instances=instances,
            labels=[int(instance["label"].label) for instance in instances],
            ids=[item["question_id"] for item in metadata],
            words=[(content_words(item["question_tokens"], STOP_WORDS),
                    content_words(item["answer_tokens"], STOP_WORDS)) for item in metadata],
        )
    # IDF over the candidate sentences of every file read, each distinct sentence once
    sentences = {frozenset(answer) for d in data.values() for _, answer in d["words"]}
    document_frequency: Dict[str, int] = {}
    for sentence in sentences:
        for word in sentence:
            document_frequency[word] = document_frequency.get(word, 0) + 1
    idf = {word: math.log(len(sentences) / count) for word, count in document_frequency.items()}

    # position of each candidate within its question, in file order
    for d in data.values():
        d["positions"] = []
        for index, question_id in enumerate(d["ids"]):
            same = index > 0 and d["ids"][index - 1] == question_id
            d["positions"].append(d["positions"][-1] + 1 if same else 0)

    print("| file | ranker | questions | MAP | MRR | MAP 95% | MRR 95% | resamples ≥ paper (MAP / MRR) |")
    print("|---|---|---:|---:|---:|---|---|---|")
    for path, d in data.items():
        plain, weighted = word_count_scores(d["words"], idf)
        positions = d["positions"]
        later_first = [1e-6 * position for position in positions]  # below any difference of counts or IDF sums
        rankers = {
            "document order": [-float(position) for position in positions],
            "random order (expected)": [0.0] * len(positions),
            "Word Cnt, ties later first (trec_eval)": [s + t for s, t in zip(plain, later_first)],
            "Word Cnt, ties expected": plain,
            "Wgt Word Cnt, ties later first (trec_eval)": [s + t for s, t in zip(weighted, later_first)],
            "Wgt Word Cnt, ties expected": weighted,
        }
        ties = None
        if model is not None:
            scores = model_scores(model, d["instances"], args.batch_size)
            by_question: Dict[str, List[float]] = {}
            for question_id, score in zip(d["ids"], scores):
                by_question.setdefault(question_id, []).append(score)
            ties = sum(len(set(values)) < len(values) for values in by_question.values())
            rankers = {"model": scores, **rankers}
        terms = {ranker: per_question(ranker_scores, d["labels"], d["ids"])
                 for ranker, ranker_scores in rankers.items()}
        name = Path(path).name
        for ranker, ranker_terms in terms.items():
            mean_map, mean_mrr = means(ranker_terms)
            ci = bootstrap(ranker_terms, args.resamples, args.seed, targets=tuple(args.paper))
            label = f"model (questions with tied scores: {ties})" if ranker == "model" else ranker
            print(f"| {name} | {label} | {len(ranker_terms)} | {mean_map:.4f} | {mean_mrr:.4f} | "
                  f"{ci['MAP'][0]:.3f}-{ci['MAP'][1]:.3f} | {ci['MRR'][0]:.3f}-{ci['MRR'][1]:.3f} | "
                  f"{ci['reach'][0]:.3f} / {ci['reach'][1]:.3f} |")
        if "model" in terms:
            first = first_sentence_shares(rankers["model"], d["labels"], d["ids"], positions)
            print(f"| {name} | the model's top candidate is the first sentence | {first[2]} | {first[0]:.3f} | | | | "
                  f"(the first sentence is a correct answer: {first[1]:.3f}) |")
            model_map, model_mrr = means(terms["model"])
            for reference in ("document order", "Wgt Word Cnt, ties later first (trec_eval)"):
                lead = bootstrap(terms["model"], args.resamples, args.seed, reference=terms[reference])
                reference_map, reference_mrr = means(terms[reference])
                print(f"| {name} | model − {reference} | {len(terms['model'])} | {model_map - reference_map:+.4f} | "
                      f"{model_mrr - reference_mrr:+.4f} | {lead['MAP'][0]:+.3f} to {lead['MAP'][1]:+.3f} | "
                      f"{lead['MRR'][0]:+.3f} to {lead['MRR'][1]:+.3f} | |")


if __name__ == "__main__":
    main()
