"""
`memplugins attention-map` (and `allennlp attention-map` where `.allennlp_plugins` lists memplugins): draws what a
model attended to for one input as a PNG heatmap, rows × columns labelled with the tokens, with a colour bar and
axis titles, the figure sized to the tokens.

    memplugins attention-map ARCHIVE INPUT --output-file map.png [--key KEY] [--line N] [--predictor NAME]
        [--layer N] [--scale row|matrix|absolute]

INPUT is a JSON object (as `allennlp predict` takes) or a .jsonl file (`--line` picks the line, default 1). What
can be drawn, by model:

* our pair models (`rte_attention`, `lstmn_fusion`, `nse_pair_classifier`, `answer_selection`): every key in the
  model's `attention_axes` (`premise_attention`, `inter_attention`, `premise_keys`, `question_answer_keys`, ...),
  labelled with the sentences' tokens; a vector (one axis) is one row;
* `iram_classifier`: `attention` (T steps × the N tokens and T - 1 earlier summaries);
* `tree_classifier`: `node_probs`, each phrase of the tree (a row, its words) against the classes: what the model
  says at every node (a tree LSTM composes by gates, so this is its map);
* any model with an `lstmn` or `nse` encoder inside (our `basic_classifier` and `hierarchical_classifier` configs,
  allennlp-models' `esim`, `bcn`, ...): the encoders' internals from the `with_encoder_internals` predictor,
  `<encoder>#<call>.attention` (LSTMN intra-attention; `--layer`) or `<encoder>#<call>.keys` (NSE), used by
  itself when the model's own prediction has none of the above.

* a hierarchical model's sentence encoder: one map per sentence, `<encoder>#<call>.sentence<s>.keys` / `.attention`;
* a `tree_lstm` inside any model (`tree_pair_classifier`, ...): `<encoder>#<call>.gates`, every phrase of the tree
  (a row) against the mean of its two forget gates and two input gates (Le & Zuidema eq. 3-6): how much of each
  child's memory and of each child's new content the phrase keeps, the tree LSTM's composition.

`--key` defaults to the first present. `--scale`: `row` (default: each row to its own largest, so the structure of
a lightly trained model's near-uniform weights shows), `matrix` (0 to the matrix's largest) or `absolute` (0 to 1).
Titles name what is drawn in words (the encoder, the call, the layer), and SST's digit classes are named ("very
negative" ... "very positive"). Drawn with matplotlib's Agg backend; nothing is downloaded.
"""
import argparse
import json
from pathlib import Path
from typing import List, NamedTuple, Optional

from allennlp.commands.subcommand import Subcommand

SCALES = ("row", "matrix", "absolute")
# SST's classes, which its files write as digits
SST_CLASSES = {2: ["negative", "positive"], 3: ["negative", "neutral", "positive"],
               5: ["very negative", "negative", "neutral", "positive", "very positive"]}


@Subcommand.register("attention-map")
class AttentionMap(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = "Draw a model's attention for one input as a PNG heatmap."
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("archive_file", help="the model archive (model.tar.gz)")
        subparser.add_argument("input", help="a JSON object, or a .jsonl file")
        subparser.add_argument("--output-file", required=True, help="where to write the PNG")
        subparser.add_argument("--key", default=None, help="which attention output to draw")
        subparser.add_argument("--line", type=int, default=1, help="the line of a .jsonl input (1-based)")
        subparser.add_argument("--predictor", default=None, help="predictor name (default: the model's)")
        subparser.add_argument("--layer", type=int, default=0, help="the layer of a multi-layer attention (LSTMN)")
        subparser.add_argument("--scale", choices=SCALES, default="row", help="what the colours span")
        subparser.add_argument("--cuda-device", type=int, default=-1)
        subparser.set_defaults(func=run_attention_map)
        return subparser


class Matrix(NamedTuple):
    key: str
    values: List[List[float]]
    rows: List[str]
    columns: List[str]
    row_title: str
    column_title: str
    measure: str = "weight"


def read_input(text: str, line: int) -> dict:
    if Path(text).is_file():
        lines = [row for row in Path(text).read_text(encoding="utf-8").splitlines() if row.strip()]
        if not 1 <= line <= len(lines):
            raise SystemExit(f"{text}: has {len(lines)} non-empty lines, --line {line} asked")
        text = lines[line - 1]
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SystemExit(f"attention-map: input is neither a file nor a JSON object ({error})")


def _internals(prediction: dict, layer: int) -> dict:
    """`encoder_internals` entries as `{key: Matrix}`; a layered attention gives its `layer`."""
    found = {}
    for entry, values in prediction.get("encoder_internals", {}).items():
        if "gates" in values:
            found[f"{entry}.gates"] = Matrix(f"{entry}.gates", values["gates"], list(map(str, values["phrases"])),
                                             list(values["gate_names"]), "phrase (node)", "gate (mean over units)",
                                             "gate value")
        for kind in ("attention", "keys"):
            if kind in values:
                matrix = values[kind]
                if matrix and isinstance(matrix[0][0], list):  # (layers, n, n)
                    if not -len(matrix) <= layer < len(matrix):
                        raise SystemExit(f"attention-map: {entry}.{kind} has {len(matrix)} layers, --layer {layer} asked")
                    matrix = matrix[layer]
                tokens = [str(token) for token in values["tokens"]]
                columns = "earlier step i (intra-attention)" if kind == "attention" else "memory slot (key z_t)"
                found[f"{entry}.{kind}"] = Matrix(f"{entry}.{kind}", matrix, tokens, tokens, "step t", columns)
    return found


def _own_outputs(model, prediction: dict) -> dict:
    """The attention outputs of the model's own prediction, as `{key: Matrix}`."""
    found = {}
    if "attention_columns" in prediction and prediction["attention"]:  # iram_classifier (T > 0 iterations)
        found["attention"] = Matrix("attention", prediction["attention"], list(map(str, prediction["attention_rows"])),
                                    list(map(str, prediction["attention_columns"])), "iteration", "token or summary")
    for name, axes in getattr(model, "attention_axes", {}).items():
        if name not in prediction:
            continue
        labels = [list(map(str, prediction[f"{axis}_tokens"])) for axis in axes]
        values = prediction[name]
        if not isinstance(values[0], list):  # a vector: one row
            values, labels, axes = [values], [[name]] + labels, (name,) + tuple(axes)
        found[name] = Matrix(name, values, labels[0], labels[1], axes[0], axes[1])
    if "node_probs" in prediction:  # tree_classifier
        tokens = prediction["tokens"]
        phrases = [" ".join(tokens[start:end]) for start, end in prediction["node_spans"]]
        order = sorted(range(len(prediction["label_names"])), key=lambda i: prediction["label_names"][i])
        values = [[row[i] for i in order] for row in prediction["node_probs"]]
        names = class_names([prediction["label_names"][i] for i in order])
        found["node_probs"] = Matrix("node_probs", values, phrases, names, "phrase (node)", "class", "probability")
    return found


def class_names(labels: List[str]) -> List[str]:
    """SST's digit labels in words (2, 3 or 5 classes, "0" lowest); other labels as they are."""
    if all(label.isdigit() for label in labels) and sorted(map(int, labels)) == list(range(len(labels))) and \
            len(labels) in SST_CLASSES:
        return [SST_CLASSES[len(labels)][int(label)] for label in labels]
    return labels


def readable(key: str, layer: int = 0) -> str:
    """A map's title in words: `_sentence_encoder#0.sentence1.keys` is "NSE memory keys z_t, sentence encoder,
    sentence 2"."""
    kinds = {"keys": "NSE memory keys z_t", "attention": f"LSTMN intra-attention, layer {layer + 1}",
             "gates": "tree LSTM gates per phrase"}
    if "#" not in key:
        return {"node_probs": "class probabilities at every phrase",
                "attention": "IRAM attention per iteration"}.get(key, key.replace("_", " "))
    module, _, rest = key.partition("#")
    call, *sentence, kind = rest.split(".")
    where = module.strip("_").replace("_", " ").replace(".", " / ")
    text = f"{kinds.get(kind, kind)}, {where}" + (f", call {int(call) + 1}" if call != "0" else "")
    if sentence:
        text += f", sentence {int(sentence[0][len('sentence'):]) + 1}"
    return text


def find_matrix(model, prediction: dict, key: Optional[str] = None, layer: int = 0) -> Matrix:
    """The attention output to draw: `key`, or the first the prediction has."""
    candidates = {**_own_outputs(model, prediction), **_internals(prediction, layer)}
    if key is None:
        if not candidates:
            raise SystemExit(f"attention-map: nothing to draw for {type(model).__name__}: its prediction has no "
                             "attention output (an iram with num_iterations 0 has none) and it holds no lstmn, nse "
                             "or tree_lstm encoder")
        return next(iter(candidates.values()))
    if key not in candidates:
        raise SystemExit(f"attention-map: no attention output {key!r}; available: {list(candidates)}")
    return candidates[key]


def render(matrix: Matrix, output_file: str, title: str = "", scale: str = "row") -> None:
    """Writes the heatmap as a PNG: one cell per weight (white 0, dark blue high), a colour bar for the scale,
    tokens on both axes, sized so every label is legible."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    import numpy

    values = numpy.asarray(matrix.values, dtype=float)
    if scale == "row":
        peaks = values.max(axis=1, keepdims=True)
        values = values / numpy.where(peaks > 0, peaks, 1.0)
    high = 1.0 if scale in ("absolute", "row") else (values.max() or 1.0)
    rows, columns = len(matrix.rows), len(matrix.columns)
    longest_row = max(len(label) for label in matrix.rows)
    longest_column = max(len(label) for label in matrix.columns)
    width = 2.0 + 0.07 * min(longest_row, 60) + 0.32 * columns + 1.2
    height = 1.5 + 0.07 * min(longest_column, 60) + 0.32 * rows
    figure, axes = pyplot.subplots(figsize=(width, height), dpi=100)
    image = axes.imshow(values, cmap="Blues", vmin=0.0, vmax=high, aspect="equal")
    axes.set_xticks(range(columns), labels=matrix.columns, rotation=90, fontsize=9)
    axes.set_yticks(range(rows), labels=[label[:60] for label in matrix.rows], fontsize=9)
    axes.set_xlabel(matrix.column_title)
    axes.set_ylabel(matrix.row_title)
    axes.xaxis.set_label_position("top")
    axes.xaxis.tick_top()
    if title:
        axes.set_title(title, fontsize=10, pad=12)
    label = matrix.measure if scale != "row" else f"{matrix.measure} / the row's largest"
    figure.colorbar(image, ax=axes, fraction=0.04, pad=0.02, label=label)
    figure.savefig(output_file, bbox_inches="tight")
    pyplot.close(figure)


def attention_prediction(archive, predictor_name: Optional[str], inputs: dict, key: Optional[str]) -> dict:
    """The model's prediction for `inputs`, unbounded (the map is the point), or with the internals of our encoders
    inside it when the model's own prediction has no attention output (or `key` names an internal)."""
    from allennlp.predictors import Predictor

    from memplugins.predictors.bounded import BoundedOutputs

    predictor = Predictor.from_archive(archive, predictor_name)
    if isinstance(predictor, BoundedOutputs):
        predictor = Predictor.from_archive(archive, predictor_name, extra_args={"max_internal_entries": 2**62})
    prediction = predictor.predict_json(inputs)
    if not _own_outputs(archive.model, prediction) or (key and "#" in key):
        predictor = Predictor.from_archive(archive, "with_encoder_internals", extra_args={
            "predictor": predictor_name or archive.model.default_predictor, "max_internal_entries": 2**62})
        prediction = predictor.predict_json(inputs)
    return prediction


def run_attention_map(args: argparse.Namespace) -> None:
    from allennlp.models.archival import load_archive

    archive = load_archive(args.archive_file, cuda_device=args.cuda_device)
    prediction = attention_prediction(archive, args.predictor, read_input(args.input, args.line), args.key)
    matrix = find_matrix(archive.model, prediction, args.key, args.layer)
    label = prediction.get("label", "")
    vocabulary = list(archive.model.vocab.get_token_to_index_vocabulary("labels")) if isinstance(label, str) else []
    if label in vocabulary:
        label = dict(zip(vocabulary, class_names(vocabulary)))[label]
    render(matrix, args.output_file, title=readable(matrix.key, args.layer) + (f" (prediction: {label})" if label
                                                                                else ""), scale=args.scale)
    print(f"attention-map: wrote {matrix.key} ({len(matrix.rows)} x {len(matrix.columns)}) to {args.output_file}")

