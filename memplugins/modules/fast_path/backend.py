"""
Which implementation the fast paths run: one setting, read here and nowhere else.

    MEMPLUGINS_BACKEND=eager     torch operations only
    MEMPLUGINS_BACKEND=triton    the Triton kernels where they apply (CUDA, float32 or float64; or CPU tensors
                                 under Triton's interpreter, TRITON_INTERPRET=1, as the default tests run them)
    MEMPLUGINS_BACKEND=graphs    the Triton kernels, and on CUDA the LSTMN's and NSE's whole step loops replayed as
                                 CUDA graphs (`step_graphs`)

Every level gives the same values as the literal references (the tests check each); they differ only in speed.
Off CUDA, "triton" and "graphs" run exactly what "eager" runs. The default is `DEFAULT`, "graphs": on CUDA the
step loops are captured without a switch, and a capture that fails falls back to the eager loop with one logged
warning that says why (`step_graphs`). Two tuning knobs of the
graphs belong to the same setting: `MEMPLUGINS_CUDA_GRAPH_BUCKET` (lengths padded to a multiple of it, default 8)
and `MEMPLUGINS_CUDA_GRAPH_CACHE` (graph pairs kept per fast path, default 64).

The variables of earlier releases still work where `MEMPLUGINS_BACKEND` is unset: `MEMPLUGINS_TRITON=0` means
"eager", `MEMPLUGINS_CUDA_GRAPHS=1` "graphs" and `MEMPLUGINS_CUDA_GRAPHS=0` at most "triton".

In Python, `use_backend("eager")` (a context manager) or `set_backend("graphs")` choose it for the process instead
of the environment; `current()` is what the fast paths ask.
"""
import contextlib
import os
from dataclasses import dataclass, replace
from typing import Iterator, Optional

LEVELS = ("eager", "triton", "graphs")
DEFAULT = "graphs"


@dataclass(frozen=True)
class Backend:
    """A fast-path implementation: `level` (one of `LEVELS`) and the graphs' two knobs."""

    level: str = DEFAULT
    graph_bucket: int = 8
    graph_cache: int = 64

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"memplugins backend: {self.level!r} is not one of {', '.join(LEVELS)}")
        for name in ("graph_bucket", "graph_cache"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"memplugins backend: {name} must be a positive integer, got {getattr(self, name)!r}")

    @property
    def triton(self) -> bool:
        return self.level in ("triton", "graphs")

    @property
    def cuda_graphs(self) -> bool:
        return self.level == "graphs"


_chosen: Optional[Backend] = None


def _positive_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip() or str(default)
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{name}={value!r}: expected a positive integer")
    return int(value)


def from_environment() -> Backend:
    """The backend the environment asks for (module doc)."""
    level = os.environ.get("MEMPLUGINS_BACKEND", "").strip().lower()
    if not level:
        level = DEFAULT
        if os.environ.get("MEMPLUGINS_CUDA_GRAPHS") == "1":
            level = "graphs"
        elif os.environ.get("MEMPLUGINS_CUDA_GRAPHS") == "0" and level == "graphs":
            level = "triton"
        if os.environ.get("MEMPLUGINS_TRITON") == "0":
            level = "eager"
    if level not in LEVELS:
        raise ValueError(f"MEMPLUGINS_BACKEND={level!r}: expected one of {', '.join(LEVELS)}")
    return Backend(level, _positive_int("MEMPLUGINS_CUDA_GRAPH_BUCKET", 8),
                   _positive_int("MEMPLUGINS_CUDA_GRAPH_CACHE", 64))


def current() -> Backend:
    """The backend in force: the one `set_backend` / `use_backend` chose, else the environment's."""
    return _chosen if _chosen is not None else from_environment()


def set_backend(level: Optional[str] = None, **knobs) -> Backend:
    """Chooses the backend for this process (None: back to the environment's); returns it."""
    global _chosen
    _chosen = None if level is None and not knobs else replace(current(), **({"level": level} if level else {}),
                                                               **knobs)
    return current()


@contextlib.contextmanager
def use_backend(level: Optional[str] = None, **knobs) -> Iterator[Backend]:
    """`set_backend` for the duration of a block."""
    global _chosen
    before = _chosen
    try:
        yield set_backend(level, **knobs)
    finally:
        _chosen = before
