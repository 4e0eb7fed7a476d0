"""
`allennlp train --recover` on torch >= 2.6: `torch.load` defaults to `weights_only=True`, and AllenNLP's
training-state checkpoints hold numpy scalars (metrics, the `cosine` scheduler's state), so recovering fails with
`UnpicklingError: Weights only load failed ... numpy._core.multiarray.scalar`. We allow-list exactly the numpy types
such checkpoints contain (`torch.serialization.add_safe_globals`); arbitrary pickles stay refused. Test:
`tests/compat/checkpoint_globals_test.py`.
"""
import numpy
import torch


def numpy_checkpoint_globals() -> list:
    """The numpy objects a pickled numpy scalar / small array / dtype refers to."""
    core = getattr(numpy, "_core", None) or numpy.core  # numpy 2 renamed numpy.core to numpy._core
    safe = [core.multiarray.scalar, core.multiarray._reconstruct, numpy.ndarray, numpy.dtype]
    dtypes = getattr(numpy, "dtypes", None)  # numpy >= 1.25 pickles dtypes by their class (numpy.dtypes.Float64DType)
    if dtypes is not None:
        safe.extend(
            getattr(dtypes, name) for name in dir(dtypes) if name.endswith("DType") and isinstance(getattr(dtypes, name), type)
        )
    return safe


def apply() -> None:
    if hasattr(torch.serialization, "add_safe_globals"):  # adding the same globals twice is harmless
        torch.serialization.add_safe_globals(numpy_checkpoint_globals())
