"""
`attention-map` (issue 25): every model family with one of our encoders has a map, drawn readably (sized to the
tokens, a colour bar, axis titles, the chosen scale). Models are untrained, built from each config's fixture data.
"""
import pytest
from PIL import Image

from memplugins.commands.attention_map import Matrix, _own_outputs, find_matrix, render
from memplugins.predictors import WithEncoderInternalsPredictor
from tests.config_models import REPO_ROOT
from tests.predictors.interpret_test import FAMILIES, NAMES, PAIR, family, predictor_for


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


def archive_of(name: str):
    """An in-memory `Archive` of the config's untrained model (what `load_archive` returns), for `attention_prediction`."""
    from allennlp.common import Params
    from allennlp.models.archival import Archive

    predictor = predictor_for(name)
    config = Params.from_file(str(REPO_ROOT / "training_config" / f"{name}.jsonnet"))
    return Archive(model=predictor._model, config=config, dataset_reader=predictor._dataset_reader,
                   validation_dataset_reader=predictor._dataset_reader, meta=None)


# every config that holds an lstmn, nse, iram or tree encoder has a map; the rest hold only AllenNLP's LSTMs (and
# the BiLSTM baseline's iram has no iterations: no attention)
NOTHING_TO_DRAW = {"snli_rte_conditional", "snli_rte_shared", "iwslt14_lstm_lstm", "sst2_bilstm_baseline"}
INPUTS = {"wikiqa_mma_nse_attention": {"question": "how are caves formed ?",
                                       "answers": ["caves form in ice .", "by water ."]}}


@pytest.mark.parametrize("name", NAMES)
def test_every_config_with_one_of_our_encoders_has_a_readable_map(name, tmp_path):
    from memplugins.commands.attention_map import attention_prediction, readable

    archive = archive_of(name)
    example = INPUTS.get(name, family(name)[0])
    prediction = attention_prediction(archive, None, example, None)
    if name in NOTHING_TO_DRAW:
        with pytest.raises(SystemExit, match="nothing to draw for .*holds no lstmn, nse or tree_lstm encoder"):
            find_matrix(archive.model, prediction)
        return
    matrix = find_matrix(archive.model, prediction)
    assert len(matrix.values) == len(matrix.rows) > 0 and all(len(row) == len(matrix.columns) for row in matrix.values)
    title = readable(matrix.key)
    assert "#" not in title and "_encoder" not in title, title  # words, not module paths
    if name.startswith("sst") and matrix.key == "node_probs":
        assert "positive" in matrix.columns  # SST's digit classes named
    render(matrix, str(tmp_path / "map.png"), title)
    assert Image.open(tmp_path / "map.png").size[0] > 100


def test_the_hierarchical_sentence_encoder_and_a_tree_lstm_are_drawn():
    from memplugins.commands.attention_map import attention_prediction

    archive = archive_of("yelp13_nse_lstm")
    matrix = find_matrix(archive.model, attention_prediction(archive, None, FAMILIES["yelp13"][0], None))
    assert matrix.key == "_sentence_encoder#0.sentence0.keys" and matrix.rows == ["the", "food", "was", "cold", "."]
    archive = archive_of("snli_tree_lstm")
    matrix = find_matrix(archive.model, attention_prediction(archive, None, PAIR, None))
    assert matrix.key == "_encoder#0.gates" and matrix.columns[:2] == ["forget left", "forget right"]
    assert len(matrix.rows) == 8 and matrix.rows[-1] == PAIR["premise"]  # the premise's phrases, the root last
    assert all(0.0 < value < 1.0 for row in matrix.values for value in row)


def test_the_default_scale_shows_structure_in_near_uniform_weights(tmp_path):
    """Lightly trained attention is near-uniform: on 0-1 (absolute) it is one flat colour; the default (row)
    spreads each row over the colour bar."""
    import numpy

    values = [[0.24, 0.26, 0.25, 0.25], [0.26, 0.24, 0.25, 0.25]]
    matrix = Matrix("m", values, ["a", "b"], ["w", "x", "y", "z"], "r", "c")
    colours = {}
    for scale in ("absolute", "row"):
        render(matrix, str(tmp_path / f"{scale}.png"), "t", scale)
        colours[scale] = numpy.asarray(Image.open(tmp_path / f"{scale}.png").convert("L"), dtype=float).std()
    assert colours["row"] > colours["absolute"]
    from memplugins.commands.attention_map import AttentionMap  # noqa: F401
    import argparse

    parser = argparse.ArgumentParser().add_subparsers()
    sub = AttentionMap().add_subparser(parser)
    assert sub.get_default("scale") == "row"
