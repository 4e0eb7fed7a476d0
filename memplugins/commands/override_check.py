"""
`train -o` with a whole block: AllenNLP's overrides replace a block given as an object (`-o '{"trainer":
{"num_epochs": 1}}'` keeps no optimizer, patience, validation metric or callbacks of the config's trainer) and merge
only dotted keys (`-o '{"trainer.num_epochs": 1}'`). That is AllenNLP's documented behaviour, so it is kept; the
`memplugins` command says which keys such an override drops before training starts.
"""
import logging
from typing import Any, Dict, List, Optional, Tuple

logger = logging.getLogger(__name__)

_VALUE_OPTIONS = {"-s", "--serialization-dir", "-o", "--overrides", "--node-rank", "--include-package"}


def train_config_and_overrides(argv: List[str]) -> Tuple[Optional[str], Optional[str]]:
    """(config path, overrides string) of a `train ...` command line."""
    config, overrides, index = None, None, 1
    while index < len(argv):
        word = argv[index]
        if word in ("-o", "--overrides") and index + 1 < len(argv):
            overrides = argv[index + 1]
        if word.startswith("--overrides="):
            overrides = word.split("=", 1)[1]
        if word in _VALUE_OPTIONS:
            index += 2
            continue
        if not word.startswith("-") and config is None:
            config = word
        index += 1
    return config, overrides


def replaced_blocks(config: Dict[str, Any], overrides: Dict[str, Any]) -> List[Tuple[str, List[str]]]:
    """(override key, keys of the config's block it drops) for every override whose value is an object replacing
    an object of the config."""
    dropped = []
    for key, value in overrides.items():
        original: Any = config
        for part in key.split("."):
            original = original.get(part) if isinstance(original, dict) else None
        if isinstance(value, dict) and isinstance(original, dict):
            lost = sorted(set(original) - set(value))
            if lost:
                dropped.append((key, lost))
    return dropped


def warn_replaced_blocks(argv: List[str]) -> None:
    config_path, serialized = train_config_and_overrides(argv)
    if not config_path or not serialized:
        return
    from allennlp.common.params import Params, parse_overrides

    try:
        config = Params.from_file(config_path).as_dict(quiet=True)
        overrides = parse_overrides(serialized)
    except Exception:  # noqa: BLE001  (AllenNLP reads both again and reports what is wrong with either)
        return
    for key, lost in replaced_blocks(config, overrides):
        example = f'"{key}.{lost[0]}"'
        logger.warning("-o replaces the whole %r block of %s: it drops %s. To change single keys and keep the rest, "
                       "write them dotted, e.g. %s", key, config_path, ", ".join(lost), example)
