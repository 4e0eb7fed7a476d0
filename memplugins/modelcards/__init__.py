"""
Model cards of the shipped configs, in allennlp-models' format (one JSON file per config, named as the config), made
by `scripts/make_model_cards.py` from the configs' headers and the replication results.

    from memplugins.modelcards import model_card
    card = model_card("snli_mma_nse")          # an allennlp `ModelCard`
"""
import difflib
from pathlib import Path
from typing import List

FOLDER = Path(__file__).resolve().parent


def names() -> List[str]:
    return sorted(path.stem for path in FOLDER.glob("*.json"))


def path(name: str) -> Path:
    """The card file of config `name` (also `name.json` or `name.jsonnet`); an unknown name names the closest."""
    name = Path(name).name
    for suffix in (".jsonnet", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    card = FOLDER / f"{name}.json"
    if not card.exists():
        close = difflib.get_close_matches(name, names(), n=3, cutoff=0.6)
        raise KeyError(f"no model card {name!r}" + (f"; did you mean {' or '.join(close)}?" if close else "")
                       + f" (cards: {', '.join(names())})")
    return card


def model_card(name: str):
    """The `allennlp.common.model_card.ModelCard` of config `name`."""
    from allennlp.common import Params
    from allennlp.common.model_card import ModelCard

    return ModelCard.from_params(Params.from_file(str(path(name))))
