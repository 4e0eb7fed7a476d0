import json

import pytest
import torch
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch

from memplugins.decoders import NseDecoderNet

SAMPLE = "fixtures/iwslt14/sample.de-en"


def reference_decoding(net: NseDecoderNet, memory, mask, words):
    """One sentence, written from eq. 1-6 with only the real source slots in the memory."""
    memory = memory[mask]
    k = net.decoding_dim
    read = (torch.zeros(k), torch.zeros(k))
    write = (torch.zeros(k), torch.zeros(k))
    outputs = []
    for y in words:
        read = net.read_cell(y.unsqueeze(0), (read[0].unsqueeze(0), read[1].unsqueeze(0)))
        read = (read[0][0], read[1][0])
        o = read[0]
        z = torch.softmax(memory @ o, 0)
        m = z @ memory
        c = torch.relu(net.compose(torch.cat([o, m])))
        write = net.write_cell(c.unsqueeze(0), (write[0].unsqueeze(0), write[1].unsqueeze(0)))
        write = (write[0][0], write[1][0])
        h = write[0]
        memory = memory * (1 - z).unsqueeze(1) + z.unsqueeze(1) * h.unsqueeze(0)
        outputs.append(h)
    return torch.stack(outputs), memory


def test_decoder_steps_equal_the_equations_and_never_touch_source_padding():
    torch.manual_seed(0)
    net = NseDecoderNet(decoding_dim=5, target_embedding_dim=4)
    memory = torch.randn(2, 6, 5)
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]], dtype=torch.bool)
    memory = memory * mask.unsqueeze(-1)
    words = torch.randn(2, 7, 4)
    state = net.init_decoder_state({"encoder_outputs": memory, "source_mask": mask})
    outputs = []
    for t in range(7):
        new_state, h = net(state, memory, mask, words[:, : t + 1])
        state.update(new_state)
        outputs.append(h)
    outputs = torch.stack(outputs, 1)
    for b in range(2):
        expected, final_memory = reference_decoding(net, memory[b], mask[b], words[b])
        assert torch.allclose(outputs[b], expected, atol=1e-5)
        assert torch.allclose(state["nse_memory"][b][mask[b]], final_memory, atol=1e-5)
    assert (state["nse_memory"][1, 3:] == 0).all()  # padding slots never written


class TestNmtConfigs(ModelTestCase):
    @pytest.mark.parametrize("config", ["nse_nse", "nse_lstm", "lstm_lstm"])
    def test_train_save_load(self, config, monkeypatch):
        monkeypatch.setenv("NUM_EPOCHS", "1")
        path = f"training_config/iwslt14_{config}.jsonnet"
        self.set_up_model(path, SAMPLE, seed=0)
        overrides = {"data_loader.batch_sampler.shuffle": False, "data_loader.batch_sampler.padding_noise": 0.0}
        self.ensure_model_can_train_save_and_load(
            path, overrides=json.dumps(overrides),
            gradients_to_ignore={"_source_text_embedder.token_embedder_tokens.weight"},  # fixed GloVe
        )
        if config == "nse_nse":  # `allennlp predict` translates {"source": ...} lines
            from allennlp.models.archival import load_archive
            from allennlp.predictors import Predictor

            archive = load_archive(str(self.TEST_DIR / "save_and_load_test" / "model.tar.gz"))
            output = Predictor.from_archive(archive).predict_json({"source": "Now why does that matter ?"})
            assert output["predicted_tokens"] and all(isinstance(t, str) for t in output["predicted_tokens"][0])

    def nse_nse_model(self, beam_size: int):
        import os

        os.environ["BEAM_SIZE"] = str(beam_size)
        try:
            self.set_up_model("training_config/iwslt14_nse_nse.jsonnet", SAMPLE, seed=0)
        finally:
            del os.environ["BEAM_SIZE"]
        self.model.eval()
        batch = Batch(self.instances[:6])
        batch.index_instances(self.vocab)
        return batch.as_tensor_dict()

    def decode_step_by_step(self, source_tokens, targets=None, steps=12):
        """Greedy decoding (targets None) or teacher-forced log-probability of `targets`, one step at a time."""
        decoder = self.model._decoder
        state = self.model._encode(source_tokens)
        state.update(decoder._decoder_net.init_decoder_state(state))
        batch_size = state["source_mask"].size(0)
        last = state["source_mask"].new_full((batch_size,), decoder._start_index, dtype=torch.long)
        chosen, total = [], torch.zeros(batch_size)
        for t in range(steps if targets is None else targets.size(1)):
            logits, state = decoder._prepare_output_projections(last, state)
            log_probs = torch.log_softmax(logits, -1)
            last = log_probs.argmax(-1) if targets is None else targets[:, t]
            total = total + log_probs.gather(1, last.unsqueeze(1)).squeeze(1)
            chosen.append(last)
        return torch.stack(chosen, 1), total

    def test_beam_one_equals_greedy(self):
        tensors = self.nse_nse_model(beam_size=1)
        with torch.no_grad():
            predictions = self.model(source_tokens=tensors["source_tokens"])["predictions"][:, 0]
            greedy, _ = self.decode_step_by_step(tensors["source_tokens"], steps=predictions.size(1))
        end = self.model._decoder._end_index
        for beam, step in zip(predictions.tolist(), greedy.tolist()):
            stop = step.index(end) + 1 if end in step else len(step)
            assert beam[:stop] == step[:stop]

    def test_beam_search_keeps_each_beams_memory(self):
        # every hypothesis' score must equal its teacher-forced log-probability, which holds only if the shared
        # memory (and the LSTM states) were reordered with the beams at every step
        tensors = self.nse_nse_model(beam_size=3)
        end = self.model._decoder._end_index
        with torch.no_grad():
            output = self.model(source_tokens=tensors["source_tokens"])
            for k in range(3):
                hypotheses = output["predictions"][:, k]
                scored = []
                for b, tokens in enumerate(hypotheses.tolist()):
                    stop = tokens.index(end) + 1 if end in tokens else len(tokens)
                    single = {"tokens": {"tokens": tensors["source_tokens"]["tokens"]["tokens"][b : b + 1]}}
                    _, total = self.decode_step_by_step(single, torch.tensor([tokens[:stop]]))
                    scored.append(total[0])
                assert torch.allclose(torch.stack(scored), output["class_log_probabilities"][:, k], atol=1e-4)
