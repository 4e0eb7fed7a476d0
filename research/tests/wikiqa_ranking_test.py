"""research/wikiqa_ranking.py on a small answer-selection model built from
training_config/wikiqa_mma_nse_attention.jsonnet: the model's row is the model's own MAP / MRR, every ranker is
printed with an interval around its figure, document order and the word counts are what their definitions give,
and the leads are the differences of the rows."""
import json
import re
import sys

import _jsonnet
import torch
from allennlp.data import Batch

from memplugins.compat import CONFIG_DEFAULTS
from research.tests.saved_models import save_with_random_weights
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "research"))
import wikiqa_ranking  # noqa: E402

DATA = REPO_ROOT / "fixtures" / "wikiqa" / "WikiQA-dev.sample.tsv"
ROW = re.compile(r"^\| \S+ \| (.+?) \| (\d+) \| ([0-9.+-]+) \| ([0-9.+-]+) \| "
                 r"(\S+?)(?:-| to )(\S+) \| (\S+?)(?:-| to )(\S+) \|", re.M)


def saved_model(tmp_path):
    config = json.loads(_jsonnet.evaluate_file(
        str(REPO_ROOT / "training_config" / "wikiqa_mma_nse_attention.jsonnet"),
        ext_vars={**CONFIG_DEFAULTS, "EMBEDDING_DIM": "50"}))
    config.pop("vocabulary")
    config["model"]["hidden_size"] = 8
    config["model"]["text_field_embedder"]["token_embedders"]["tokens"]["projection_dim"] = 8
    config["model"]["classifier_feedforward"].update(input_dim=32, hidden_dims=6)
    return save_with_random_weights(tmp_path, config, str(DATA))


def test_rows_are_the_rankers_own_figures(tmp_path, capsys):
    model, instances = saved_model(tmp_path)
    wikiqa_ranking.main([str(tmp_path), str(DATA), "--resamples", "300", "--batch-size", "7"])
    printed = capsys.readouterr().out
    assert torch.is_grad_enabled()  # it ran in this process: later tests in it train
    rows = {row[0]: row[1:] for row in ROW.findall(printed)}
    top_first, first_correct = map(float, re.search(
        r"first sentence \| \d+ \| ([0-9.]+) \|.*a correct answer: ([0-9.]+)\)", printed).groups())
    assert [name for name in rows if not name.startswith("model")] == [
        "document order", "random order (expected)",
        "Word Cnt, ties later first (trec_eval)", "Word Cnt, ties expected",
        "Wgt Word Cnt, ties later first (trec_eval)", "Wgt Word Cnt, ties expected",
    ]
    model_row = next(name for name in rows if name.startswith("model (questions with tied scores:"))

    batch = Batch(instances)  # the model's own evaluation of the same pairs
    batch.index_instances(model.vocab)
    model.get_metrics(reset=True)
    model(**batch.as_tensor_dict())
    own = model.get_metrics(reset=True)
    questions, mean_map, mean_mrr = int(rows[model_row][0]), float(rows[model_row][1]), float(rows[model_row][2])
    assert questions == own["questions"] > 1
    assert abs(mean_map - own["MAP"]) < 6e-5 and abs(mean_mrr - own["MRR"]) < 6e-5

    for name, (count, map_, mrr, map_low, map_high, mrr_low, mrr_high) in rows.items():
        if not name.startswith("model −"):
            assert int(count) == questions
            assert float(map_low) <= float(map_) <= float(map_high) and float(mrr_low) <= float(mrr) <= float(mrr_high)
    for reference in ("document order", "Wgt Word Cnt, ties later first (trec_eval)"):
        lead = rows[f"model − {reference}"]
        assert abs(float(lead[1]) - (mean_map - float(rows[reference][1]))) < 2e-4
        assert float(lead[3]) <= float(lead[1]) <= float(lead[4])

    # document order by hand: precision at the ranks of the correct sentences, in file order
    questions_in_order = {}
    for instance in instances:
        questions_in_order.setdefault(instance["metadata"]["question_id"], []).append(int(instance["label"].label))
    answered = [labels for labels in questions_in_order.values() if any(labels)]
    by_hand = []
    for labels in answered:
        ranks = [rank for rank, label in enumerate(labels, start=1) if label]
        by_hand.append(sum(index / rank for index, rank in enumerate(ranks, start=1)) / len(ranks))
    assert abs(float(rows["document order"][1]) - sum(by_hand) / len(by_hand)) < 6e-5
    assert abs(first_correct - sum(labels[0] for labels in answered) / len(answered)) < 6e-4

    probabilities = [float(output["probability"]) for output in model.forward_on_instances(instances)]
    tops = {}
    for instance, probability in zip(instances, probabilities):
        question_id = instance["metadata"]["question_id"]
        tops.setdefault(question_id, []).append(probability)
    answered_ids = [q for q, labels in questions_in_order.items() if any(labels)]
    on_top = sum(max(range(len(tops[q])), key=lambda i: tops[q][i]) == 0 for q in answered_ids) / len(answered_ids)
    assert abs(top_first - on_top) < 6e-4


def test_word_counts_leave_out_stop_words_and_weight_by_idf():
    from spacy.lang.en.stop_words import STOP_WORDS

    question = wikiqa_ranking.content_words("Who wrote the play Hamlet ?".split(), STOP_WORDS)
    answers = [wikiqa_ranking.content_words(text.split(), STOP_WORDS) for text in
               ("Hamlet is a play by Shakespeare .", "The play was written in 1600 .", "Who knows ?")]
    assert question == {"wrote", "play", "hamlet"}  # "who", "the" and "?" are left out
    plain, weighted = wikiqa_ranking.word_count_scores([(question, answer) for answer in answers],
                                                       {"hamlet": 2.0, "play": 0.5})
    assert plain == [2.0, 1.0, 0.0] and weighted == [2.5, 0.5, 0.0]
