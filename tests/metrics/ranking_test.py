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
