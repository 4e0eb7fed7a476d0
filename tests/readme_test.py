from allennlp.common.registrable import Registrable

from tests.conftest import REPO_ROOT


def test_readme_lists_every_registered_name():
    readme = (REPO_ROOT / "README.md").read_text()
    ours = [
        (base.__name__, name)
        for base, names in Registrable._registry.items()
        for name, (cls, _) in names.items()
        if cls.__module__.startswith("memplugins")
    ]
    assert ours, "nothing registered by memplugins?"
    missing = [f"{kind} {name}" for kind, name in ours if f"| `{name}` |" not in readme]
    assert not missing, f"README's registered-names table lacks: {missing}"


def test_readme_lists_every_shipped_config():
    readme = (REPO_ROOT / "README.md").read_text()
    missing = [p.name for p in (REPO_ROOT / "training_config").glob("*.jsonnet") if p.name not in readme]
    assert not missing, missing


def test_readme_is_a_map_of_at_most_250_lines_without_investigation_prose():
    readme = (REPO_ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    for word in ("p-value", "p 0.", "Welch", "seed 1", "seeds 1"):
        assert word not in readme, word
