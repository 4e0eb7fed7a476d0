"""
`allennlp attention-map`: renders an attention matrix from a model's prediction as a PNG heatmap (rows × columns,
darker = more weight, labelled with the tokens), like Figure 6 of Tutek and Šnajder (2018).

    allennlp attention-map ARCHIVE INPUT --output-file map.png [--key KEY] [--line N] [--predictor NAME]

INPUT is a JSON object (as `allennlp predict` takes) or a .jsonl file (`--line` picks the line, default 1).
Which matrices can be drawn, and their row / column labels:

* `iram_classifier`: `attention` (T × (N + T - 1)), rows `attention_rows`, columns `attention_columns`;
* our pair models (`rte_attention`, `lstmn_fusion`, `nse_pair_classifier`, ...): every key in the model's
  `attention_axes` (e.g. `premise_attention`, `inter_attention`, `premise_keys`), labelled with
  `premise_tokens` / `hypothesis_tokens`; a vector (one axis) is drawn as one row;
* any other model with an `lstmn` or `nse` encoder inside (allennlp-models' `esim`, `bcn`, `basic_classifier`,
  ...): the encoders' internals from the `with_encoder_internals` predictor, keys `<encoder>#<call>.attention`
  (LSTMN intra-attention; `--layer` picks the layer, default 0) or `<encoder>#<call>.keys` (NSE), labelled with
  the tokens. Used automatically when the model's own prediction has no attention.

`--key` defaults to the first of these present in the prediction. Rendering uses Pillow (a dependency of the
stack); nothing is downloaded.
"""
import argparse
import json
from pathlib import Path
from typing import List, Sequence, Tuple

from allennlp.commands.subcommand import Subcommand


@Subcommand.register("attention-map")
class AttentionMap(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = "Render a model's attention for one input as a PNG heatmap."
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("archive_file", help="the model archive (model.tar.gz)")
        subparser.add_argument("input", help="a JSON object, or a .jsonl file")
        subparser.add_argument("--output-file", required=True, help="where to write the PNG")
        subparser.add_argument("--key", default=None, help="which attention output to draw")
        subparser.add_argument("--line", type=int, default=1, help="the line of a .jsonl input (1-based)")
        subparser.add_argument("--predictor", default=None, help="predictor name (default: the model's)")
        subparser.add_argument("--layer", type=int, default=0, help="the layer of a multi-layer attention (LSTMN)")
        subparser.add_argument("--cuda-device", type=int, default=-1)
        subparser.set_defaults(func=run_attention_map)
        return subparser


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


def _internals_candidates(prediction: dict, layer: int) -> dict:
    """`encoder_internals` entries as `{key: (matrix, tokens)}`; a layered attention gives its `layer`."""
    found = {}
    for entry, values in prediction.get("encoder_internals", {}).items():
        for kind in ("attention", "keys"):
            if kind in values:
                matrix = values[kind]
                if matrix and isinstance(matrix[0][0], list):  # (layers, n, n)
                    if not -len(matrix) <= layer < len(matrix):
                        raise SystemExit(f"attention-map: {entry}.{kind} has {len(matrix)} layers, --layer {layer} asked")
                    matrix = matrix[layer]
                found[f"{entry}.{kind}"] = (matrix, values["tokens"])
    return found


def has_attention(model, prediction: dict) -> bool:
    return ("attention_columns" in prediction or "encoder_internals" in prediction
            or any(name in prediction for name in getattr(model, "attention_axes", {})))


def find_matrix(
    model, prediction: dict, key: str = None, layer: int = 0
) -> Tuple[str, List[List[float]], List[str], List[str]]:
    """(key, matrix, row labels, column labels) of the attention output to draw."""
    candidates = {}
    if "attention_columns" in prediction:
        candidates["attention"] = ("attention_rows", "attention_columns")
    for name, axes in getattr(model, "attention_axes", {}).items():
        candidates[name] = tuple(f"{axis}_tokens" for axis in axes)
    internals = _internals_candidates(prediction, layer)
    available = [name for name in candidates if name in prediction] + list(internals)
    if key is None:
        if not available:
            raise SystemExit("attention-map: the prediction has no attention output this command knows")
        key = available[0]
    elif key not in available:
        raise SystemExit(f"attention-map: no attention output {key!r}; available: {available}")
    if key in internals:
        matrix, tokens = internals[key]
        return key, matrix, [str(x) for x in tokens], [str(x) for x in tokens]
    matrix = prediction[key]
    labels = [prediction[label_key] for label_key in candidates[key]]
    if not isinstance(matrix[0], list):  # a vector: one row
        matrix, labels = [matrix], [[key]] + labels
    return key, matrix, [str(x) for x in labels[0]], [str(x) for x in labels[1]]


def render(matrix: Sequence[Sequence[float]], rows: Sequence[str], columns: Sequence[str], title: str = ""):
    """A PIL image of the heatmap: one cell per weight, white (0) to dark blue (the matrix's maximum)."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default()
    cell, char_w = 24, 8
    left = 10 + char_w * max(len(r) for r in rows)
    top = 20 + char_w * max(len(c) for c in columns)
    width, height = left + cell * len(columns) + 10, top + cell * len(rows) + 10
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    peak = max(max(row) for row in matrix) or 1.0
    for i, row in enumerate(matrix):
        draw.text((5, top + i * cell + cell // 3), rows[i], fill="black", font=font)
        for j, weight in enumerate(row):
            shade = int(255 * (1 - weight / peak))
            box = (left + j * cell, top + i * cell, left + (j + 1) * cell - 1, top + (i + 1) * cell - 1)
            draw.rectangle(box, fill=(shade, shade, 255), outline=(220, 220, 220))
    for j, label in enumerate(columns):  # column labels written vertically
        text = Image.new("RGB", (char_w * len(label) + 4, 14), "white")
        ImageDraw.Draw(text).text((2, 1), label, fill="black", font=font)
        rotated = text.rotate(90, expand=True)
        image.paste(rotated, (left + j * cell + cell // 4, top - rotated.size[1] - 4))
    if title:
        draw.text((5, 3), title, fill="black", font=font)
    return image


def run_attention_map(args: argparse.Namespace) -> None:
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    from memplugins.predictors.bounded import BoundedOutputs

    archive = load_archive(args.archive_file, cuda_device=args.cuda_device)
    predictor = Predictor.from_archive(archive, args.predictor)
    if isinstance(predictor, BoundedOutputs):  # the map is the point: keep any size
        predictor = Predictor.from_archive(archive, args.predictor, extra_args={"max_internal_entries": 2**62})
    inputs = read_input(args.input, args.line)
    prediction = predictor.predict_json(inputs)
    if not has_attention(archive.model, prediction) or (args.key and "#" in args.key):
        # another project's model (e.g. esim) with our encoders inside: their internals
        predictor = Predictor.from_archive(archive, "with_encoder_internals", extra_args={
            "predictor": args.predictor or archive.model.default_predictor, "max_internal_entries": 2**62})
        prediction = predictor.predict_json(inputs)
    key, matrix, rows, columns = find_matrix(archive.model, prediction, args.key, args.layer)
    render(matrix, rows, columns, title=f"{key}: {prediction.get('label', '')}").save(args.output_file)
    print(f"attention-map: wrote {key} ({len(rows)} x {len(columns)}) to {args.output_file}")
