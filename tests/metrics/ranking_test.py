import pytest
import torch

from memplugins.metrics import MapMrr


def test_map_and_mrr_against_hand_computation():
    metric = MapMrr()
    # q1: ranking by score -> labels [0, 1, 0, 1]: AP = (1/2 + 2/4) / 2 = 0.5, RR = 1/2
    metric(torch.tensor([0.9, 0.8, 0.3, 0.1]), torch.tensor([0, 1, 0, 1]), ["q1"] * 4)
    # q2 arrives over two batches: scores 0.2 (1), 0.7 (0), 0.6 (1) -> ranked labels [0, 1, 1]:
    # AP = (1/2 + 2/3) / 2 = 7/12, RR = 1/2
    metric(torch.tensor([0.2, 0.7]), torch.tensor([1, 0]), ["q2", "q2"])
    metric(torch.tensor([0.6]), torch.tensor([1]), ["q2"])
    # q3 has no correct answer: excluded from both means (standard WikiQA evaluation)
    metric(torch.tensor([0.5, 0.4]), torch.tensor([0, 0]), ["q3", "q3"])
    # q4 all correct: AP = RR = 1
    metric(torch.tensor([0.1]), torch.tensor([1]), ["q4"])
    # the per-question terms the means average (what a bootstrap over questions resamples); q3 is not among them
    terms = metric.per_question()
    assert terms.keys() == {"q1", "q2", "q4"}
    assert terms["q2"] == pytest.approx((7 / 12, 0.5)) and terms["q4"] == (1.0, 1.0)
    values = metric.get_metric(reset=True)
    assert values["MAP"] == pytest.approx((0.5 + 7 / 12 + 1) / 3)
    assert values["MRR"] == pytest.approx((0.5 + 0.5 + 1) / 3)
    assert (values["questions"], values["questions_without_answer"]) == (3, 1)  # the evaluation says what it left out
    empty = {"MAP": 0.0, "MRR": 0.0, "questions": 0, "questions_without_answer": 0}
    assert metric.get_metric() == empty  # reset, and no question: no division by zero


def test_first_ranked_correct_gives_one():
    metric = MapMrr()
    metric(torch.tensor([3.0, 1.0, 2.0]), torch.tensor([1, 0, 0]), ["a", "a", "a"])
    assert metric.get_metric() == {"MAP": 1.0, "MRR": 1.0, "questions": 1, "questions_without_answer": 0}


def _brute_force(scores, labels):
    """AP and RR averaged over every order of the tied candidates (all permutations, then sorted stably)."""
    import itertools

    aps, rrs = [], []
    for order in itertools.permutations(range(len(scores))):
        ranked = [labels[i] for i in sorted(order, key=lambda i: -scores[i])]  # stable: ties keep `order`
        hits, precisions = 0, []
        for rank, label in enumerate(ranked, start=1):
            if label:
                hits += 1
                precisions.append(hits / rank)
        aps.append(sum(precisions) / len(precisions))
        rrs.append(1 / (ranked.index(1) + 1))
    return sum(aps) / len(aps), sum(rrs) / len(rrs)


@pytest.mark.parametrize(
    "scores, labels",
    [
        ([0.5, 0.5, 0.5, 0.5], [1, 0, 0, 0]),  # constant scores: the order-free expectation
        ([0.5, 0.5, 0.5, 0.5, 0.5], [0, 1, 0, 1, 1]),
        ([0.9, 0.5, 0.5, 0.5, 0.1, 0.1], [0, 1, 0, 1, 1, 0]),  # a tie below a wrong one, a tie at the bottom
        ([0.3, 0.3, 0.8, 0.8, 0.8, 0.2], [1, 0, 0, 1, 0, 1]),
    ],
)
def test_ties_give_the_expectation_over_their_orders(scores, labels):
    metric = MapMrr()
    metric(torch.tensor(scores, dtype=torch.float64), torch.tensor(labels), ["q"] * len(scores))
    expected_ap, expected_rr = _brute_force(scores, labels)
    values = metric.get_metric()
    assert values["MAP"] == pytest.approx(expected_ap, abs=1e-12)
    assert values["MRR"] == pytest.approx(expected_rr, abs=1e-12)
    # the arrival order no longer matters
    reversed_metric = MapMrr()
    reversed_metric(torch.tensor(scores[::-1], dtype=torch.float64), torch.tensor(labels[::-1]), ["q"] * len(scores))
    assert reversed_metric.get_metric()["MAP"] == pytest.approx(values["MAP"], abs=1e-12)
