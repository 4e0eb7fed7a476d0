from typing import Dict, List

import numpy

from allennlp.common.util import JsonDict, sanitize
from allennlp.data import Instance
from allennlp.data.fields import LabelField
from allennlp.predictors.predictor import Predictor

from memplugins.predictors.bounded import BoundedOutputs
from memplugins.predictors.inputs import input_text, input_texts
from memplugins.readers.truncation import take_cuts


@Predictor.register("answer_ranking")
class AnswerRankingPredictor(BoundedOutputs, Predictor):
    """
    `allennlp predict` for `answer_selection` (WikiQA; its default predictor). Input lines:
    `{"question": "...", "answers": ["...", "..."]}` (the candidates of one question), or one WikiQA pair
    `{"question": "...", "answer": "..."}`. Output: `ranking`, the candidates sorted by the model's probability that
    they answer the question, each `{"answer", "probability", "index"}` (`index`: its position in the input), the
    best `answer`, and for a single candidate the model's whole output (probability, tokens, attention), bounded
    by `max_internal_entries` as in `entailment_pairs`.

    Registered as a `Predictor` with name "answer_ranking".

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
    max_internal_entries : `int`, optional (default = `100000`)
    frozen : `bool`, optional (default = `True`)
    """

    def _candidates(self, json_dict: JsonDict) -> List[str]:
        input_text(json_dict, ("question",), "answer_ranking")
        if "answers" in json_dict:
            return input_texts(json_dict, "answers", "answer_ranking")
        return [input_text(json_dict, ("answer",), "answer_ranking")]

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, numpy.ndarray]) -> List[Instance]:
        """For AllenNLP's interpreters: the candidate labelled as the model judges it (answers the question or not)."""
        new_instance = instance.duplicate()
        new_instance.add_field("label", LabelField(int(float(outputs["probability"]) > 0.5), skip_indexing=True))
        return [new_instance]

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        return self._dataset_reader.text_to_instance(json_dict["question"], self._candidates(json_dict)[0])

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        results = []
        for json_dict in inputs:
            answers = self._candidates(json_dict)
            take_cuts(self._dataset_reader)
            instances = [self._dataset_reader.text_to_instance(json_dict["question"], a, question_id="q") for a in answers]
            cuts = take_cuts(self._dataset_reader)
            outputs = self.predict_batch_instance(instances)  # bounded (BoundedOutputs)
            ranking = sorted(
                ({"answer": answer, "probability": float(output["probability"]), "index": i}
                 for i, (answer, output) in enumerate(zip(answers, outputs))),
                key=lambda item: -item["probability"],
            )
            result = {"question": json_dict["question"], "answer": ranking[0]["answer"], "ranking": ranking}
            if len(answers) == 1:
                result.update(outputs[0])
            results.append(sanitize(self.note_cuts(result, cuts)))
        return results
