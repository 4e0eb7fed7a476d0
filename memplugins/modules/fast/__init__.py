"""
Moved in 0.2 (issue 94): each encoder's fast path now lives in its own folder (`memplugins.modules.lstmn.fast`,
`.nse.fast`, `.nse.deep`, `.tree_lstm.fast`) and the shared machinery in `memplugins.modules.fast_path`. The old
import paths below keep working as aliases for one release and will then be removed.
"""
import importlib
import sys

_MOVED = {
    "contract": "memplugins.modules.fast_path.contract",
    "step_graphs": "memplugins.modules.fast_path.step_graphs",
    "lstmn": "memplugins.modules.lstmn.fast",
    "nse": "memplugins.modules.nse.fast",
    "nse_backward": "memplugins.modules.nse.backward",
    "nse_state": "memplugins.modules.nse.state",
    "nse_deep": "memplugins.modules.nse.deep",
    "tree_lstm": "memplugins.modules.tree_lstm.fast",
}
for _old, _new in _MOVED.items():
    sys.modules[f"{__name__}.{_old}"] = importlib.import_module(_new)
