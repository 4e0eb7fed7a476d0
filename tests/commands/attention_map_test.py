"""
`attention-map` (issue 25): every model family with one of our encoders has a map, drawn readably (sized to the
tokens, a colour bar, axis titles, the chosen scale). Models are untrained, built from each config's fixture data.
"""
import pytest
from PIL import Image

from memplugins.commands.attention_map import Matrix, _own_outputs, find_matrix, render
from memplugins.predictors import WithEncoderInternalsPredictor
from tests.predictors.interpret_test import FAMILIES, PAIR, predictor_for


class PairModel:
    attention_axes = {"premise_attention": ("hypothesis", "premise"), "hypothesis_attention": ("hypothesis",)}


def test_pair_model_attention_is_labelled_with_its_sentences():
    prediction = {"premise_tokens": ["a", "dog", "runs"], "hypothesis_tokens": ["an", "animal"],
                  "premise_attention": [[0.2, 0.5, 0.3], [0.1, 0.8, 0.1]], "hypothesis_attention": [0.4, 0.6]}
    matrix = find_matrix(PairModel(), prediction)
    assert matrix.key == "premise_attention" and matrix.rows == ["an", "animal"] and matrix.columns == ["a", "dog", "runs"]
    assert (matrix.row_title, matrix.column_title) == ("hypothesis", "premise")
    matrix = find_matrix(PairModel(), prediction, "hypothesis_attention")
    assert matrix.values == [[0.4, 0.6]] and matrix.rows == ["hypothesis_attention"] and matrix.columns == ["an", "animal"]
    with pytest.raises(SystemExit, match="available"):
        find_matrix(PairModel(), prediction, "nope")


@pytest.mark.parametrize("scale", ["absolute", "matrix", "row"])
def test_the_figure_grows_with_the_tokens(tmp_path, scale):
    def size(rows, columns):
        values = [[1.0 / columns] * columns for _ in range(rows)]
        path = tmp_path / f"{rows}x{columns}.png"
        render(Matrix("m", values, [f"row{i}" for i in range(rows)], [f"c{j}" for j in range(columns)], "r", "c"),
               str(path), "title", scale)
        return Image.open(path).size

    small, wide, tall = size(2, 2), size(2, 20), size(20, 2)
    assert wide[0] > small[0] + 200 and tall[1] > small[1] + 200


# families whose own prediction carries the map, and those drawn from the internals of the encoders inside them
OWN = ["snli_rte_word_by_word", "snli_mma_nse_attention", "snli_lstmn_deep_fusion", "wikiqa_mma_nse_attention",
       "sst2_iram_full", "sst5_tree_lstm", "sst5_tree_rnn"]
INTERNALS = ["sst5_nse", "sst_lstmn", "yelp13_nse_nse", "ptb_lstmn_lm", "iwslt14_nse_nse"]


@pytest.mark.parametrize("name", OWN + INTERNALS)
def test_every_family_with_our_encoders_has_a_map(name, tmp_path):
    predictor = predictor_for(name)
    example, _ = FAMILIES[name]
    prediction = predictor.predict_json(example)
    if name in INTERNALS:
        assert not _own_outputs(predictor._model, prediction)
        predictor = WithEncoderInternalsPredictor(predictor._model, predictor._dataset_reader,
                                                  predictor=predictor._model.default_predictor)
        prediction = predictor.predict_json(example)
    matrix = find_matrix(predictor._model, prediction)
    assert len(matrix.values) == len(matrix.rows) and all(len(row) == len(matrix.columns) for row in matrix.values)
    render(matrix, str(tmp_path / "map.png"), matrix.key)
    assert Image.open(tmp_path / "map.png").size[0] > 100


def test_a_model_without_attention_says_so():
    predictor = predictor_for("snli_tree_lstm")
    with pytest.raises(SystemExit, match="no attention output"):
        find_matrix(predictor._model, predictor.predict_json(PAIR))
