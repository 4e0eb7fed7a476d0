"""
A static check of the Triton kernels for the race fixed on 2026-11-26 (`tape_read_kernel`'s module doc): a store over
memory that the same program loaded earlier, with no `tl.debug_barrier()` between them. A block may be held by
several warps of a program but is stored by one thread, so a warp that runs late loads the new value where it needed
the old one. Triton's interpreter, which the other kernel tests use, runs a program's threads as one and cannot show
that; on a GPU `test_triton_kernels_are_repeatable_at_training_sizes` (tests/gpu_test.py) can, but CI has none.

The check reads each `@triton.jit` function's statements in order (loops once: a later iteration touches other
addresses) and reports every store to a pointer (named by the leftmost name of its address, through local
aliases such as `row = grad_rows + b * h`) that the function loaded from since its last barrier, unless that load
sits inside the store's own value, `tl.store(p, tl.load(p) + x)`: there one thread loads and stores each element,
and the loaded value goes nowhere else. Pairs that are safe for the same reason but spread over statements are
listed in SAFE with why. Its limits: two names for one buffer, and hazards across calls of one jit function into
another, are not seen (the callers put barriers between such calls).
"""
import ast
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import pytest

MODULES = Path(__file__).resolve().parents[3] / "memplugins" / "modules"
KERNEL_FILES = sorted(MODULES.glob("*/*kernel.py"))


def _name(path: Path) -> str:
    """A kernel file's name here: its folder and stem, e.g. `nse/read_kernel`."""
    return f"{path.parent.name}/{path.stem}"



# (module, function, pointer): why the in-place update cannot race
SAFE = {
    ("nse/read_kernel", "_pending_write", "decay"):
        "a is loaded, scaled and stored element by element; no other value is computed from the loaded a",
    ("nse/read_kernel", "_pending_write", "weights"):
        "W's block is loaded, scaled and stored (and copied out) element by element, nothing else reads it",
    ("tree_lstm/level_kernel", "_output_backward", "grad_memory"):
        "∂c is loaded and stored back with an addend, element by element, the loaded value used nowhere else",
}


def _is_call(node: ast.AST, name: str) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "tl")


def _base(node: ast.AST, aliases: Dict[str, str]) -> Optional[str]:
    while isinstance(node, ast.BinOp):
        node = node.left
    if isinstance(node, ast.Name):
        return aliases.get(node.id, node.id)
    return None


def _loads(node: ast.AST, aliases: Dict[str, str], skip: Optional[str] = None) -> Set[str]:
    """The pointers loaded anywhere in `node`, leaving out loads of `skip` (a store's own pointer)."""
    found = set()
    for child in ast.walk(node):
        if _is_call(child, "load") and child.args:
            base = _base(child.args[0], aliases)
            if base is not None and base != skip:
                found.add(base)
    return found


def _statements(body: List[ast.stmt]):
    for statement in body:
        if isinstance(statement, (ast.For, ast.While)):
            yield from _statements(statement.body)
        elif isinstance(statement, ast.If):
            yield statement.test
            yield from _statements(statement.body)
            yield from _statements(statement.orelse)
        else:
            yield statement


def hazards(path: Path) -> List[Tuple[str, str, int]]:
    """(function, pointer, line) of every store over a pointer loaded since the function's last barrier."""
    found = []
    for function in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(function, ast.FunctionDef) and any(
                isinstance(d, ast.Attribute) and d.attr == "jit" for d in function.decorator_list)):
            continue
        aliases: Dict[str, str] = {}
        loaded: Set[str] = set()
        for statement in _statements(function.body):
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target, value = statement.targets[0], statement.value
                pairs = (zip(target.elts, value.elts) if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                         else [(target, value)])
                for name, expression in pairs:
                    if isinstance(name, ast.Name) and isinstance(expression, ast.BinOp):
                        base = _base(expression, aliases)
                        if base is not None:
                            aliases[name.id] = base
            calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)]
            if any(_is_call(call, "debug_barrier") for call in calls):
                loaded.clear()
                continue
            stores = [call for call in calls if _is_call(call, "store") and len(call.args) >= 2]
            if not stores:
                loaded |= _loads(statement, aliases)
                continue
            for store in stores:
                pointer = _base(store.args[0], aliases)
                loaded |= _loads(store.args[1], aliases, skip=pointer)
                if pointer in loaded:
                    found.append((function.name, pointer, store.lineno))
    return found


@pytest.mark.parametrize("path", KERNEL_FILES, ids=[_name(path) for path in KERNEL_FILES])
def test_no_kernel_stores_over_what_it_loaded_without_a_barrier(path):
    unsafe = [(function, pointer, line) for function, pointer, line in hazards(path)
              if (_name(path), function, pointer) not in SAFE]
    assert not unsafe, f"{path.name}: stores over loaded memory without tl.debug_barrier() between: {unsafe}"


def test_the_check_finds_the_race_that_was_fixed(tmp_path):
    """The tape read before 6f36416, reduced: scores stored, a barrier, then loaded and overwritten in place."""
    kernel = tmp_path / "old_kernel.py"
    kernel.write_text(
        "import triton\nimport triton.language as tl\n\n"
        "@triton.jit\n"
        "def _read(weights, tape, t, BLOCK: tl.constexpr):\n"
        "    rows = tl.arange(0, BLOCK)\n"
        "    tl.store(weights + rows, rows * 1.0)\n"
        "    tl.debug_barrier()\n"
        "    for start in range(0, t, BLOCK):\n"
        "        weight = tl.exp(tl.load(weights + start + rows))\n"
        "        tl.store(weights + start + rows, weight)\n"
        "        row = tape + start\n"
        "        tl.store(row + rows, tl.load(row + rows) + weight)\n"  # own element: safe
    )
    assert hazards(kernel) == [("_read", "weights", 11)]
    fixed = kernel.read_text().replace("        tl.store(weights + start", "        tl.debug_barrier()\n"
                                       "        tl.store(weights + start")
    kernel.write_text(fixed)
    assert hazards(kernel) == []


def test_safe_entries_are_still_needed():
    """Every SAFE entry names an update the check still reports (a stale entry would hide a new one)."""
    reported = {(_name(path), function, pointer) for path in KERNEL_FILES for function, pointer, _ in hazards(path)}
    assert set(SAFE) <= reported, set(SAFE) - reported
