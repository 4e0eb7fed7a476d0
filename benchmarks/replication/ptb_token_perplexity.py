"""
Token-weighted perplexity of a `language_model` archive, PPL = exp(NLL / T) over the whole file as Cheng et al.
(2016) define it. allennlp-models' `language_model` metric averages per-batch mean losses instead (each batch
weighs the same, whatever its token count), so `allennlp evaluate` reports a slightly different number; this sums
the model's `forward_loss` (mean token NLL of a batch) times `batch_weight` (its token count) over all batches.

    .venv/bin/python benchmarks/replication/ptb_token_perplexity.py ARCHIVE FILE [FILE ...]

On the GPU named by the environment's `CUDA_DEVICE` (as `benchmarks/replication/replicate.py` sets it), else on the CPU.
"""
import math
import os
import sys

import torch
from allennlp.data import Batch
from allennlp.nn.util import move_to_device
import allennlp_models.lm  # noqa: F401  (language_model, its reader; not NarrativeQA: it calls nltk.download)
import memplugins  # noqa: F401
from memplugins.untrusted_archives import load_archive  # the archive is untrusted input


def token_perplexity(archive_path: str, data_file: str, batch_size: int = 40, cuda_device: int = -1) -> float:
    archive = load_archive(archive_path, cuda_device=cuda_device)
    model, reader = archive.model.eval(), archive.validation_dataset_reader
    instances = list(reader.read(data_file))
    total_loss, total_tokens = 0.0, 0.0
    with torch.no_grad():
        for start in range(0, len(instances), batch_size):
            batch = Batch(instances[start : start + batch_size])
            batch.index_instances(model.vocab)
            output = model(**move_to_device(batch.as_tensor_dict(), cuda_device))
            total_loss += float(output["forward_loss"]) * float(output["batch_weight"])  # mean -> sum
            total_tokens += float(output["batch_weight"])
    return math.exp(total_loss / total_tokens)


if __name__ == "__main__":
    for path in sys.argv[2:]:
        print(f"{path}\t{token_perplexity(sys.argv[1], path, cuda_device=int(os.environ.get('CUDA_DEVICE', '-1'))):.1f}")
