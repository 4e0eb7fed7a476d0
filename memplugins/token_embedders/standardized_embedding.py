import torch
from allennlp.modules.token_embedders import Embedding, TokenEmbedder


@TokenEmbedder.register("standardized_embedding")
class StandardizedEmbedding(Embedding):
    """
    AllenNLP's `embedding` whose vectors are standardised once, when it is built: every dimension is shifted and
    scaled to mean 0 and standard deviation 1 over the vocabulary's rows (the padding row, if any, stays 0). IRAM
    (Tutek and Šnajder 2018, section 4.2) "follow[s] the recommendation of Mu et al. (2017) and standardize[s] the
    embeddings"; we read "standardize" literally (Mu et al.'s own post-processing also removes the top principal
    components, which IRAM does not mention). With pretrained vectors the statistics are those of the vocabulary's
    rows (AllenNLP fills words missing from the file from a normal with the file's mean and std, so they barely
    move the statistics). Built from an archive, the saved (already standardised) weights replace the result.

    Registered as a `TokenEmbedder` with name "standardized_embedding"; it takes `embedding`'s parameters.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        with torch.no_grad():
            keep = torch.ones(self.weight.size(0), dtype=torch.bool)
            if self.padding_index is not None:
                keep[self.padding_index] = False
            rows = self.weight[keep]
            self.weight[keep] = (rows - rows.mean(0)) / rows.std(0).clamp_min(1e-6)
