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
