"""
Evaluating on no data is an error, not a row of 0.0 metrics. AllenNLP's evaluator iterates the data loader and
reports the model's metrics over whatever it saw: an empty file (or one whose every line a reader skips, e.g.
SNLI's '-' labels) gives accuracy 0.0, BLEU 0.0, MAP 0.0 and exit status 0. Our readers already refuse such files;
this covers every reader, allennlp-models' too (`sst_tokens`), by refusing an evaluation whose data loader yields
no batch, before any metric is written. AllenNLP's bucket sampler meets an empty file first, with an
`AssertionError` ("Found no field that needed padding; we are surprised..."): it raises `NoInstancesError` instead,
which the evaluation turns into the same message naming the file. Test: `tests/commands/empty_evaluation_test.py`.
"""
from allennlp.common.checks import ConfigurationError
from allennlp.data.samplers.bucket_batch_sampler import BucketBatchSampler
from allennlp.evaluation.evaluator import SimpleEvaluator

from memplugins.compat.patching import patch
from memplugins.readers.errors import MalformedInputError


class NoInstancesError(ConfigurationError):
    """A data loader was given no instances to batch."""


def _refusing_no_instances(original):
    def _guess_sorting_keys(self, instances, num_instances: int = 10) -> None:
        if hasattr(instances, "__len__") and len(instances) == 0:
            raise NoInstancesError("no instances to batch: the data file is empty, or its reader skipped every line")
        return original(self, instances, num_instances)

    return _guess_sorting_keys


class _RefusingEmpty:
    """A data loader that raises at the end of an iteration that yielded nothing; everything else is the loader's."""

    def __init__(self, loader) -> None:
        self._loader = loader

    def __iter__(self):
        count = 0
        path = getattr(self._loader, "data_path", "the evaluation data")
        try:
            for batch in self._loader:
                count += 1
                yield batch
        except NoInstancesError:
            count = 0
        if not count:
            raise MalformedInputError(str(path), 0, "no instances to evaluate (every metric would read 0.0)")

    def __getattr__(self, name):
        return getattr(self._loader, name)


def _refusing_empty_data(original):
    def __call__(self, model, data_loader, *args, **kwargs):
        return original(self, model, _RefusingEmpty(data_loader), *args, **kwargs)

    return __call__


def apply() -> None:
    patch(SimpleEvaluator, "__call__", _refusing_empty_data)
    patch(BucketBatchSampler, "_guess_sorting_keys", _refusing_no_instances)
