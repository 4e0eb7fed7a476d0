"""
The machinery every fast path shares: the contract (`contract.py`: one entry point, float32 under autocast,
nothing saved under `no_grad`, retained graphs, `create_graph` refused with a pointer to the reference), the one
backend setting (`backend.py`: eager, Triton kernels, or CUDA graphs of the step loops), the step graphs themselves
(`step_graphs.py`), the LSTM cell's Triton kernel that the LSTMN and the NSE share (`cell_kernel.py`), and autocast
helpers (`autocast.py`). Each encoder's own equations, fast path, kernels and literal reference are in its folder:
`memplugins.modules.lstmn`, `.nse`, `.tree_lstm`.
"""
from memplugins.modules.fast_path.backend import Backend, current, set_backend, use_backend
from memplugins.modules.fast_path.contract import first_order_backward, run_fast_path

__all__ = ["Backend", "current", "first_order_backward", "run_fast_path", "set_backend", "use_backend"]
