"""
Moved in 0.2 (issue 94): each literal reference now lives beside its fast path (`memplugins.modules.lstmn.reference`,
`.nse.reference`, `.tree_lstm.reference`) and takes explicit weights (`LstmnLayer.weights()`, `NseEncoder.weights()`,
`TreeLstmEncoder.weights()`) instead of the layer or encoder object. The old import paths and signatures below keep
working as aliases for one release and will then be removed.
"""
import sys

from memplugins.modules.lstmn.reference import lstmn_reference, lstmn_reference_batch
from memplugins.modules.nse import reference as _nse
from memplugins.modules.tree_lstm.reference import tree_lstm_reference as _tree, tree_lstm_reference_batch as _trees


def lstmn_layer_reference(layer, x, addend=None):
    return lstmn_reference(x, layer.weights(), addend)


def lstmn_layer_reference_batch(layer, inputs, mask, addend=None):
    return lstmn_reference_batch(inputs, mask, layer.weights(), addend)


def nse_reference(encoder, x, *args, **kwargs):
    return _nse.nse_reference(encoder.weights(), x, *args, **kwargs)


def nse_reference_batch(encoder, inputs, mask, *args, **kwargs):
    return _nse.nse_reference_batch(encoder.weights(), inputs, mask, *args, **kwargs)


def tree_lstm_reference(encoder, words, tree):
    return _tree(encoder.weights(), words, tree)


def tree_lstm_reference_batch(encoder, inputs, mask, tensors):
    return _trees(encoder.weights(), encoder.leaves(inputs, mask), mask, tensors)


lstm_step = _nse.lstm_step
for _old in ("lstmn", "nse", "tree_lstm"):
    sys.modules[f"{__name__}.{_old}"] = sys.modules[__name__]
