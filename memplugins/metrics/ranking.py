import math
from typing import Dict, List, Sequence, Tuple

import torch
from allennlp.training.metrics.metric import Metric


@Metric.register("map_mrr")
class MapMrr(Metric):
    """
    Mean average precision and mean reciprocal rank over questions, for answer sentence selection (WikiQA).
    Scores and 0/1 labels of candidate answers are collected per question id across batches; `get_metric` ranks
    each question's candidates by score and averages over questions:

    * AP = mean over the question's correct candidates of precision at that candidate's rank;
    * RR = 1 / rank of the first correct candidate.

    Candidates whose scores are exactly equal get the expectation of AP and RR over every order of the tie, all
    equally likely (McSherry and Najork 2008), so the figures depend on the scores alone, not on the order in which
    the candidates arrived. The order matters on WikiQA: its candidates come in the order of the Wikipedia summary,
    and that order alone reaches test MAP .642 (`research/wikiqa_ranking.py`), so a model with constant scores,
    ranked in arrival order, would look about as good as a trained one (expected over orders it reads about .40).
    trec_eval, the standard WikiQA evaluator, breaks ties by descending document id instead. A trained model's
    continuous scores rarely tie (the MMA-NSE run's: within 5 of 243 test questions, whose MAP and MRR are the same
    to four digits under the expectation and under arrival order).

    Questions with no correct candidate are left out of both means, as the standard WikiQA evaluation does (the
    corpus's `-filtered.ref` files and the paper's trec_eval setting); `questions` counts those ranked and
    `questions_without_answer` those left out, so an evaluation says what its means are over. Questions whose
    candidates are all correct count (AP = RR = 1). Not for multi-process training: each worker would rank only its
    share of a question's candidates, so `get_metric` raises under distributed training.

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

    def per_question(self) -> Dict[str, Tuple[float, float]]:
        """(AP, RR) of each question collected so far that has a correct candidate, by question id: the terms
        `get_metric` averages (e.g. for a bootstrap over questions, `research/wikiqa_ranking.py`)."""
        terms = {}
        for question_id, candidates in self._candidates.items():
            groups: Dict[float, List[int]] = {}  # score -> [candidates, correct ones], a group per distinct score
            for score, label in candidates:
                group = groups.setdefault(score, [0, 0])
                group[0] += 1
                group[1] += label
            total_correct = sum(correct for _, correct in groups.values())
            if not total_correct:
                continue
            precision_sum, reciprocal_rank, above, correct_above = 0.0, None, 0, 0
            for score in sorted(groups, reverse=True):
                size, correct = groups[score]
                if correct:
                    precision_sum += correct * _expected_precision(above, correct_above, size, correct)
                    if reciprocal_rank is None:
                        reciprocal_rank = _expected_reciprocal_rank(above, size, correct)
                above += size
                correct_above += correct
            terms[question_id] = (precision_sum / total_correct, reciprocal_rank)
        return terms

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            raise RuntimeError("map_mrr needs all candidates of a question in one process; evaluate without distributed")
        terms = list(self.per_question().values())
        count = len(terms)
        metrics = {
            "MAP": sum(ap for ap, _ in terms) / count if count else 0.0,
            "MRR": sum(rr for _, rr in terms) / count if count else 0.0,
            "questions": count,
            "questions_without_answer": len(self._candidates) - count,
        }
        if reset:
            self.reset()
        return metrics

    def reset(self) -> None:
        self._candidates = {}


def _expected_precision(above: int, correct_above: int, size: int, correct: int) -> float:
    """Expected precision at the rank of one correct candidate of a tied group of `size` candidates, `correct` of
    them correct, ranked below `above` candidates of which `correct_above` are correct, over the group's orders:
    the candidate sits at each place p = 1..size of the group with probability 1/size, and given p the number of
    the group's other correct candidates ahead of it is hypergeometric with mean (p - 1)(correct - 1)/(size - 1);
    precision at rank above + p is linear in that number, so its expectation is exact."""
    if size == 1:
        return (correct_above + 1) / (above + 1)
    return sum(
        (correct_above + 1 + (place - 1) * (correct - 1) / (size - 1)) / (above + place) for place in range(1, size + 1)
    ) / size


def _expected_reciprocal_rank(above: int, size: int, correct: int) -> float:
    """Expected 1 / rank of the first correct candidate when it is in a tied group of `size` candidates with
    `correct` correct ones below `above` candidates: the first correct one is the group's k-th with probability
    C(size - k, correct - 1) / C(size, correct)."""
    total = math.comb(size, correct)
    return sum(
        math.comb(size - k, correct - 1) / total / (above + k) for k in range(1, size - correct + 2)
    )
