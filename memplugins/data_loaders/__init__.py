from memplugins.data_loaders.tensorized import TensorizedDataLoader

__all__ = ["TensorizedDataLoader"]
