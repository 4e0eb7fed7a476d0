import pytest

from memplugins.commands.attention_map import find_matrix, render


class PairModel:
    attention_axes = {"premise_attention": ("hypothesis", "premise"), "hypothesis_attention": ("hypothesis",)}


def test_pair_model_attention_is_labelled_with_its_sentences():
    prediction = {"premise_tokens": ["a", "dog", "runs"], "hypothesis_tokens": ["an", "animal"],
                  "premise_attention": [[0.2, 0.5, 0.3], [0.1, 0.8, 0.1]], "hypothesis_attention": [0.4, 0.6]}
    key, matrix, rows, columns = find_matrix(PairModel(), prediction)
    assert key == "premise_attention" and rows == ["an", "animal"] and columns == ["a", "dog", "runs"]
    key, matrix, rows, columns = find_matrix(PairModel(), prediction, "hypothesis_attention")
    assert matrix == [[0.4, 0.6]] and rows == ["hypothesis_attention"] and columns == ["an", "animal"]
    with pytest.raises(SystemExit, match="available"):
        find_matrix(PairModel(), prediction, "nope")


def test_render_size_follows_the_matrix():
    small = render([[0.5, 0.5]], ["t1"], ["a", "b"])
    large = render([[0.1] * 10, [0.1] * 10], ["t1", "t2"], list("abcdefghij"))
    assert large.size[0] > small.size[0] and large.size[1] > small.size[1]
