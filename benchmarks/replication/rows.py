"""
The rows `replicate.py` trains, declared as data: one JSON file per family under `rows/`
(`{"family": NAME, "rows": [ROW, ...]}`), each ROW our model or the allennlp-models peer on the paper's protocol:
its config, the config's `std.extVar` variables (`DATA/...` under `--data`, `SLICE/NAME` a line range of a data file
that `slices[NAME]` names, for the corpora whose train split is missing here), AllenNLP `-o` overrides, the test
file and metrics, and the paper's figure. A row that has started must not change (its config is checked on
`--recover`): add a new row instead. Every result line stores the row as it was run (`run`: config, variables and
the resolved overrides), so it can be re-run from the line alone.
"""
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

ROWS = Path(__file__).resolve().parent / "rows"
# measuring instruments some rows train (modules of the top-level research/ folder, which the commands'
# PYTHONPATH holds): `--include-package`d for those rows only
INSTRUMENTS = ("word_aligned_decomposable_attention", "windowed_lstmn")


@dataclass
class Row:
    name: str
    family: str
    system: str  # "ours" or "peer"
    label: str
    config: str  # relative to the repository root
    variables: Dict[str, str]  # the config's std.extVar values
    test_file: str
    metric: str  # a key of `allennlp evaluate`'s output, or "token_perplexity"
    dev_metric: str  # the validation metric the trainer selects on (without sign)
    data: str  # what it trains and selects on, for the table
    paper: Optional[float] = None
    also: Dict[str, Optional[float]] = field(default_factory=dict)  # further test metrics, with their papers' figures
    overrides: dict = field(default_factory=dict)  # AllenNLP `-o` keys: "a.b" replaces b inside a
    callbacks: List[dict] = field(default_factory=list)
    seeds: Optional[List[int]] = None  # rows that fix their seeds (best-of-seeds protocols)
    # NAME -> [DATA/... source, first line, end line]: lines [first, end) of the source (gzip or plain)
    slices: Dict[str, list] = field(default_factory=dict)
    packages: List[str] = field(default_factory=list)  # INSTRUMENTS the row's config names
    # a row whose run of the same seed gives this row's embedding table (its best epoch's, through AllenNLP's
    # `pretrained` initializer); that run must stay in --runs until this one is done
    vectors_from: Optional[str] = None
    note: str = ""  # how the row's definition relates to the runs recorded under it, where that needs saying


def load_family(path: Path) -> List[Row]:
    spec = json.loads(Path(path).read_text(encoding="utf-8"))
    return [Row(family=spec["family"], **row) for row in spec["rows"]]


def load_families(folder: Path = ROWS) -> Dict[str, List[Row]]:
    """Every family under `folder`, in the order `ORDER` gives, then any other alphabetically."""
    families = {path.stem: load_family(path) for path in sorted(folder.glob("*.json"))}
    return {name: families[name] for name in sorted(families, key=lambda n: (ORDER.index(n) if n in ORDER else 99, n))}


ORDER = ["ptb_lm", "sst_tree_lstm", "sst_lstmn", "sst_nse", "sst_iram", "sst_peers", "wikiqa", "snli", "iwslt"]
FAMILIES = load_families()
