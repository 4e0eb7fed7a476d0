"""
An archive's `config.json`, read and checked as untrusted input.

Reading. AllenNLP reads it with jsonnet, which runs `import` / `importstr` (any local file) and `std.extVar` (every
environment variable), and which is a full programming language (a config can loop until memory runs out). Here it
is read as JSON with the two liberties AllenNLP-era archives take and jsonnet accepts: comments (`//`, `#`,
`/* */`) and trailing commas. Nothing is evaluated, nesting is capped (`MAX_DEPTH`), and every failure is an
`ArchiveError` naming the file and line.

Checking, once, over the whole config, when the archive is opened (`check_registered_types`): every `type` at any
depth (the model, readers, data loaders, batch samplers, the `evaluation` block, the trainer and its callbacks,
anything a command builds from `archive.config` later) must be a registered name. AllenNLP resolves a `type` that is
not registered but contains a dot by importing it and calling what it finds (`{"type": "os.system", "command":
"..."}`), so such a name is refused, with the key path and the opt-in in the message. A spaCy tokenizer's `language`
must be a model name, not a path (spaCy loads a pipeline folder from a path, and imports an installed package by
name).
"""
import json
import re
from typing import Any, Iterator, List, Tuple

from memplugins.archives.extraction import ArchiveError

#: deepest nesting of objects and arrays an archive's config may have (AllenNLP's own configs nest under 10)
MAX_DEPTH = 100
ALLOW_IMPORT_PATHS_VARIABLE = "MEMPLUGINS_ALLOW_IMPORT_PATHS"
OPT_IN = ("If you trust this archive, allow import paths: load_archive(..., allow_import_paths=True), the memplugins "
          f"command's --allow-import-paths, or {ALLOW_IMPORT_PATHS_VARIABLE}=1 for the allennlp command.")
_SPACY_MODEL_NAME = re.compile(r"[A-Za-z]{2,3}(_[A-Za-z0-9_]+)?(-[0-9A-Za-z.]+)?\Z")


def strip_json_liberties(text: str, file_name: str) -> str:
    """`text` with comments and trailing commas removed (outside strings), after checking that arrays and objects
    nest at most `MAX_DEPTH` deep; one pass, linear in the text."""
    out: List[str] = []
    depth = index = 0
    line = 1
    length = len(text)
    pending_comma = -1  # index in `out` of a comma that a closing bracket would make trailing
    while index < length:
        char = text[index]
        if char == '"':
            end = index + 1
            while end < length and text[end] != '"':
                if text[end] == "\n":
                    break
                end += 2 if text[end] == "\\" else 1
            out.append(text[index : end + 1])
            index = end + 1
            pending_comma = -1
            continue
        if char == "/" and text.startswith("//", index) or char == "#":
            end = text.find("\n", index)
            index = length if end < 0 else end
            continue
        if char == "/" and text.startswith("/*", index):
            end = text.find("*/", index + 2)
            if end < 0:
                raise ArchiveError(f"{file_name}:{line}: a /* comment is never closed")
            line += text.count("\n", index, end)
            index = end + 2
            continue
        if char == "\n":
            line += 1
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise ArchiveError(f"{file_name}:{line}: nested more than {MAX_DEPTH} deep; a model config is not")
        elif char in "]}":
            depth -= 1
            if pending_comma >= 0:
                out[pending_comma] = ""
        if char == ",":
            pending_comma = len(out)
        elif not char.isspace():
            pending_comma = -1
        out.append(char)
        index += 1
    return "".join(out)


def parse_archive_config(text: str, file_name: str) -> dict:
    """An archive's config text (module docstring) as a dict, or an `ArchiveError` naming the file and line."""
    try:
        config = json.loads(strip_json_liberties(text, file_name))
    except json.JSONDecodeError as error:
        raise ArchiveError(f"{file_name}:{error.lineno}: an archive's config must be JSON ({error.msg} at column "
                           f"{error.colno}); it is not evaluated as jsonnet (no imports, no std.extVar)") from None
    except (ValueError, RecursionError) as error:  # e.g. a number of over 4,300 digits
        raise ArchiveError(f"{file_name}: an archive's config must be JSON ({error})") from None
    if not isinstance(config, dict):
        raise ArchiveError(f"{file_name}: an archive's config must be a JSON object, got {type(config).__name__}")
    return config


def _walk(value: Any, path: str) -> Iterator[Tuple[str, dict]]:
    """Every object inside `value` with its key path (iteratively: depth is already capped, but stay flat)."""
    stack = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            yield where, item
            stack.extend((f"{where}.{key}" if where else str(key), child) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((f"{where}[{index}]", child) for index, child in enumerate(item))


def registered_names() -> set:
    from allennlp.common.registrable import Registrable

    return {name for names in Registrable._registry.values() for name in names}


def check_registered_types(config: dict, file_name: str) -> None:
    """Refuses (`ArchiveError`) an import path in any `type`, and a spaCy `language` that is a path (module
    docstring)."""
    registered = None
    for where, item in _walk(config, ""):
        kind = item.get("type")
        if isinstance(kind, str) and "." in kind:
            registered = registered if registered is not None else registered_names()
            if kind not in registered:
                key = f"{where}.type" if where else "type"
                raise ArchiveError(f"{file_name}: {key} is {kind!r}, an import path, not a registered name. A model "
                                   "archive's config may name only registered types: importing a path runs its "
                                   f"code (a config can name any function, e.g. 'os.system'). {OPT_IN}")
        if kind == "spacy" and isinstance(item.get("language"), str):
            if not _SPACY_MODEL_NAME.match(item["language"]):
                raise ArchiveError(f"{file_name}: {where}.language is {item['language']!r}, not a spaCy model name "
                                   f"(such as 'en_core_web_sm'); spaCy would load it as a path or module. {OPT_IN}")
