"""The one way memplugins changes a third-party object: `patch`, idempotent, keeping the original at hand."""
import sys
from typing import Any, Callable

PATCHED = "_memplugins_original"  # set on every replacement: the object it replaced


def patch(owner: Any, name: str, make_replacement: Callable[[Any], Any], rebind: bool = False) -> bool:
    """
    Replaces `owner.name` by `make_replacement(original)`, once: when `owner.name` is already one of our
    replacements (a second `apply()`, a re-imported module), nothing changes. With `rebind`, every loaded module that
    bound the original by name (`from allennlp.nn.util import tiny_value_of_dtype`) gets the replacement too.
    Returns whether it patched.
    """
    original = getattr(owner, name)
    if hasattr(original, PATCHED):
        return False
    replacement = make_replacement(original)
    setattr(replacement, PATCHED, original)
    setattr(owner, name, replacement)
    if rebind:
        for module in list(sys.modules.values()):
            if getattr(module, name, None) is original:
                setattr(module, name, replacement)
    return True


def original_of(replacement: Any) -> Any:
    """What a replacement replaced (itself if it is none of ours)."""
    return getattr(replacement, PATCHED, replacement)
