"""Crafting model archives the way an attacker would: a trained archive's members, edited or extended."""
import io
import json
import tarfile
from pathlib import Path
from typing import Callable, Iterable, List, Optional, Tuple

Member = Tuple[tarfile.TarInfo, Optional[bytes]]


def members_of(archive: Path) -> List[Member]:
    with tarfile.open(archive) as tar:
        return [(member, tar.extractfile(member).read() if member.isfile() else None) for member in tar.getmembers()]


def write_archive(path: Path, members: Iterable[Member], extra: Iterable[Member] = (), mode: str = "w:gz") -> Path:
    """A tar of `members` plus `extra` ones (gzipped by default)."""
    with tarfile.open(path, mode) as tar:
        for member, data in list(members) + list(extra):
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
    return path


def replaced(members: Iterable[Member], name: str, data: bytes) -> List[Member]:
    """`members` with the one whose name ends in `name` holding `data` instead."""
    result = []
    for member, old in members:
        if member.name.endswith(name):
            member, old = file_member(member.name, data)
        result.append((member, old))
    return result


def with_config(members: Iterable[Member], edit: Callable[[dict], object]) -> List[Member]:
    """`members` with `config.json` edited (`edit` returns the new config, or its text)."""
    result = []
    for member, data in members:
        if member.name.endswith("config.json"):
            config = edit(json.loads(data))
            member, data = file_member(member.name, (config if isinstance(config, str) else json.dumps(config)).encode())
        result.append((member, data))
    return result


def file_member(name: str, data: bytes = b"x") -> Member:
    member = tarfile.TarInfo(name)
    member.size = len(data)
    return member, data


def set_path(config: dict, path: str, value) -> dict:
    """`config` with `value` at a dotted `path` (`data_loader.batch_sampler`), creating objects on the way; a
    `[n]` part indexes a list."""
    node = config
    parts = path.split(".")
    for part in parts[:-1]:
        if part.endswith("]"):
            name, index = part[:-1].split("[")
            node = node.setdefault(name, [{}])[int(index)]
        else:
            node = node.setdefault(part, {})
    node[parts[-1]] = value
    return config


def stray_files(root: Path) -> List[Path]:
    """Files anywhere under `root` but in its `tmp` folder (extraction) and the archives themselves."""
    return [p for p in root.rglob("*") if p.is_file() and p.relative_to(root).parts[0] != "tmp"
            and not p.name.endswith((".tar.gz", ".json", ".jsonl"))]
