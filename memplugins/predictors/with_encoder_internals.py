from typing import Optional

from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from memplugins.predictors.bounded import DEFAULT_MAX_INTERNAL_ENTRIES, BoundedOutputs
from memplugins.predictors.inputs import input_object
from memplugins.predictors.internals import EncoderInternals


@Predictor.register("with_encoder_internals")
class WithEncoderInternalsPredictor(BoundedOutputs, Predictor):
    """
    Any model's predictor plus the internals of the memplugins encoders inside the model (see `EncoderInternals`):
    e.g. allennlp-models' `esim` with `"encoder": {"type": "lstmn", ...}`:

        allennlp predict model.tar.gz input.jsonl --include-package memplugins \\
            --predictor with_encoder_internals --predictor-args '{"predictor": "textual_entailment"}'

    Each prediction is the base predictor's input handling and the model's output, plus `encoder_internals`
    (`{"<encoder>#<call>": {"attention" or "keys": [...], "tokens": [...]}}`), bounded like every memplugins
    predictor's output (`max_internal_entries`). `attention-map` uses it for models whose own output has no
    attention.

    Registered as a `Predictor` with name "with_encoder_internals".

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
    predictor : `str`, optional (default = the model's `default_predictor`)
        The predictor whose input format is used.
    max_internal_entries : `int`, optional (default = `100000`)
        The largest array (in numbers) a prediction keeps.
    frozen : `bool`, optional (default = `True`)
    **predictor_args
        Passed to the base predictor.
    """

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        predictor: Optional[str] = None,
        max_internal_entries: int = DEFAULT_MAX_INTERNAL_ENTRIES,
        frozen: bool = True,
        **predictor_args,
    ) -> None:
        super().__init__(model, dataset_reader, frozen)
        name = predictor or model.default_predictor
        if name is None or name == "with_encoder_internals":
            raise ConfigurationError(
                f"with_encoder_internals: give the base predictor, e.g. --predictor-args "
                f"'{{\"predictor\": \"textual_entailment\"}}' ({type(model).__name__} has no default predictor)"
            )
        self._base = Predictor.by_name(name)(model, dataset_reader, **predictor_args)
        self._internals = EncoderInternals(model)
        self._max_internal_entries = max_internal_entries

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        return self._base._json_to_instance(input_object(json_dict, "with_encoder_internals"))

    def load_line(self, line: str) -> JsonDict:
        return self._base.load_line(line)

    def dump_line(self, outputs: JsonDict) -> str:
        return self._base.dump_line(outputs)
