from typing import Dict, List, Sequence

import torch
from allennlp.training.metrics.metric import Metric


@Metric.register("map_mrr")
class MapMrr(Metric):
    """
    Mean average precision and mean reciprocal rank over questions, for answer sentence selection (WikiQA).
    Scores and 0/1 labels of candidate answers are collected per question id across batches; `get_metric` ranks
    each question's candidates by score (ties keep arrival order) and averages over questions:

    * AP = mean over the question's correct candidates of precision at that candidate's rank;
    * RR = 1 / rank of the first correct candidate.

    Questions with no correct candidate are left out of both means, as the standard WikiQA evaluation does (the
    corpus's `-filtered.ref` files and the paper's trec_eval setting); `questions` counts those ranked and
    `questions_without_answer` those left out, so an evaluation says what its means are over. Questions whose candidates are all correct
    count (AP = RR = 1). Not for multi-process training: each worker would rank only its share of a question's
    candidates, so `get_metric` raises under distributed training.

    Registered as a `Metric` with name "map_mrr".
    """

    def __init__(self) -> None:
        # a plain dict (not a defaultdict): a mid-epoch checkpoint carries the metric's state, and a training state
        # must load with torch.load(weights_only=True), which refuses defaultdicts (memplugins.training.exact_resume)
        self._candidates: Dict[str, List] = {}

    def __call__(self, scores: torch.Tensor, labels: torch.Tensor, question_ids: Sequence[str]) -> None:  # type: ignore
        scores, labels = self.detach_tensors(scores, labels)
        for score, label, question_id in zip(scores.view(-1).tolist(), labels.view(-1).tolist(), question_ids):
            self._candidates.setdefault(question_id, []).append((score, int(label)))

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            raise RuntimeError("map_mrr needs all candidates of a question in one process; evaluate without distributed")
        average_precisions, reciprocal_ranks = [], []
        for candidates in self._candidates.values():
            ranked = [label for _, label in sorted(candidates, key=lambda pair: -pair[0])]
            if not any(ranked):
                continue
            hits, precisions = 0, []
            for rank, label in enumerate(ranked, start=1):
                if label:
                    hits += 1
                    precisions.append(hits / rank)
            average_precisions.append(sum(precisions) / len(precisions))
            reciprocal_ranks.append(1.0 / (ranked.index(1) + 1))
        count = len(average_precisions)
        metrics = {
            "MAP": sum(average_precisions) / count if count else 0.0,
            "MRR": sum(reciprocal_ranks) / count if count else 0.0,
            "questions": count,
            "questions_without_answer": len(self._candidates) - count,
        }
        if reset:
            self.reset()
        return metrics

    def reset(self) -> None:
        self._candidates = {}
