"""Every shipped config has a model card (memplugins/modelcards/, allennlp-models' format) that loads as AllenNLP's
`ModelCard` and describes that config's model (issue 25)."""
import json

import pytest
from allennlp.common import Params
from allennlp.common.model_card import ModelCard

from tests.config_models import CONFIGS, REPO_ROOT

CARDS = REPO_ROOT / "memplugins" / "modelcards"


@pytest.mark.parametrize("config", CONFIGS)
def test_every_config_has_a_card_that_loads(config):
    name = config.split("/")[-1][: -len(".jsonnet")]
    path = CARDS / f"{name}.json"
    assert path.exists(), f"no model card for {config}: run scripts/make_model_cards.py"
    data = json.loads(path.read_text())
    card = ModelCard.from_params(Params(dict(data)))
    assert card.id == f"memplugins-{name}"
    assert data["registered_model_name"] == Params.from_file(str(REPO_ROOT / config))["model"]["type"]
    assert card.model_details.paper.title and card.model_details.paper.url.startswith("https://")
    assert data["intended_use"]["primary_uses"] and data["quantitative_analyses"]["unitary_results"]
    assert "paper None" not in data["quantitative_analyses"]["unitary_results"]  # a row without a paper figure
    assert data["model_details"]["description"].startswith(
        (REPO_ROOT / config).read_text().splitlines()[0][2:].strip()[:40])


def test_no_card_without_a_config():
    names = {path.stem for path in CARDS.glob("*.json")}
    assert names == {config.split("/")[-1][: -len(".jsonnet")] for config in CONFIGS}


def test_a_cards_protocol_line_shows_a_rows_further_metrics_beside_its_main_one():
    import sys

    sys.path.insert(0, str(REPO_ROOT / "scripts"))
    from make_model_cards import _protocol_line

    result = {"row": "wikiqa_x", "label": "answer_selection", "system": "ours", "seed": 1, "dev": 0.66,
              "dev_metric": "MAP", "metric": "MAP", "value": 0.65, "paper": 0.6811, "also": {"MRR": 0.67},
              "also_paper": {"MRR": 0.6993}, "data": "WikiQA train", "device": "cpu", "date": "2026-11-26"}
    line = _protocol_line([result, {**result, "seed": 2, "dev": 0.5, "value": 0.6, "also": {"MRR": 0.61}}])
    assert ("test MAP 0.6500 (MRR 0.6700) (best-dev of 2 seeds: 0.6500 / 0.6000) "
            "(paper 0.6811 (MRR 0.6993); WikiQA train; cpu, 2026-11-26)") in line
