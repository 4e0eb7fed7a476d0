"""
`memplugins plot-metrics RUN_DIR`: a run's training and validation curves, per epoch, as a PNG, from the
`metrics_epoch_N.json` files `allennlp train` writes (no TensorBoard needed; the configs also log to TensorBoard,
under `RUN_DIR/log`). One panel per metric that has both a training and a validation value (loss, accuracy,
perplexity, MAP, ...) or, with `--metrics`, the ones named; the best epoch (`best_epoch`) is marked.

    memplugins plot-metrics out/ [--output-file out/curves.png] [--metrics loss accuracy]
"""
import argparse
import json
import re
from pathlib import Path
from typing import Dict, List, Optional

from allennlp.commands.subcommand import Subcommand
from allennlp.common.checks import ConfigurationError

VOLATILE = ("duration", "memory", "_MB", "epoch", "lr")


@Subcommand.register("plot-metrics")
class PlotMetrics(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = "Draw a run's training and validation curves as a PNG."
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("run_dir", help="the serialization directory of a (finished or running) run")
        subparser.add_argument("--output-file", default=None, help="the PNG (default: RUN_DIR/curves.png)")
        subparser.add_argument("--metrics", nargs="*", default=None, help="which metrics (default: every shared one)")
        subparser.set_defaults(func=lambda args: print(plot_metrics(args.run_dir, args.output_file, args.metrics)))
        return subparser


def read_epochs(run_dir: str) -> List[Dict[str, float]]:
    """The run's per-epoch metrics, in epoch order."""
    files = sorted(Path(run_dir).glob("metrics_epoch_*.json"), key=lambda path: int(re.findall(r"\d+", path.stem)[-1]))
    if not files:
        raise ConfigurationError(f"plot-metrics: {run_dir} has no metrics_epoch_N.json (not a run directory, or no "
                                 "epoch has finished yet)")
    return [json.loads(path.read_text()) for path in files]


def curve_names(epochs: List[Dict[str, float]], wanted: Optional[List[str]] = None) -> List[str]:
    """Metric names with a training or a validation value in every epoch file, `loss` first."""
    names = set()
    for key, value in epochs[-1].items():
        for prefix in ("training_", "validation_"):
            if key.startswith(prefix) and isinstance(value, (int, float)) and not any(v in key for v in VOLATILE):
                names.add(key[len(prefix):])
    if wanted:
        missing = [name for name in wanted if name not in names]
        if missing:
            raise ConfigurationError(f"plot-metrics: no metric {missing}; the run has {sorted(names)}")
        return list(wanted)
    return sorted(names, key=lambda name: (name != "loss", name))


def plot_metrics(run_dir: str, output_file: Optional[str] = None, metrics: Optional[List[str]] = None) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    epochs = read_epochs(run_dir)
    names = curve_names(epochs, metrics)
    output_file = output_file or str(Path(run_dir) / "curves.png")
    columns = min(3, len(names))
    rows = (len(names) + columns - 1) // columns
    figure, axes = pyplot.subplots(rows, columns, figsize=(4.2 * columns, 3.2 * rows), squeeze=False)
    best = epochs[-1].get("best_epoch")
    for panel, name in zip(axes.flat, names):
        for prefix, style in (("training_", "o-"), ("validation_", "s-")):
            points = [(e, m[prefix + name]) for e, m in enumerate(epochs) if prefix + name in m]
            if points:
                panel.plot(*zip(*points), style, label=prefix[:-1], markersize=3)
        if best is not None:
            panel.axvline(best, color="grey", linestyle=":", label=f"best epoch ({best})")
        panel.set_title(name)
        panel.set_xlabel("epoch")
        panel.legend(fontsize=8)
    for panel in list(axes.flat)[len(names):]:
        panel.axis("off")
    run = Path(run_dir).resolve()
    figure.suptitle(f"{run.parent.name}/{run.name}")
    figure.tight_layout()
    figure.savefig(output_file)
    pyplot.close(figure)
    return f"plot-metrics: wrote {len(names)} curves over {len(epochs)} epochs to {output_file}"
