import os
import socket
from pathlib import Path

import pytest
import torch

# Test models are tiny: one intra-op thread is faster than two, and subprocesses (CLI, 2-process distributed
# training) must not oversubscribe the cores, where OpenMP's spin-waiting makes small ops 10-40x slower.
os.environ["OMP_NUM_THREADS"] = "1"
torch.set_num_threads(1)

from allennlp.common.plugins import import_plugins

import memplugins  # noqa: F401  (registers everything, applies compat)

from memplugins.cli import keep_nltk_offline  # noqa: E402

# as the `memplugins` command does: allennlp-models' NarrativeQA module asks nltk to download at import (offline here)
keep_nltk_offline()
import_plugins()  # as the `allennlp` command does: registers all of allennlp-models (language_model, sst_tokens, ...)

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = REPO_ROOT / "fixtures"
TEST_FIXTURES = REPO_ROOT / "tests" / "fixtures"
NO_NETWORK_PATH = TEST_FIXTURES / "no_network"  # a sitecustomize.py for subprocesses


def free_port() -> int:
    """A loopback port nobody listens on, for a distributed run's master: the suite runs on two workers
    (scripts/test.sh), so two distributed tests may start at once, and AllenNLP's default port is fixed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _is_loopback(address) -> bool:
    if isinstance(address, tuple):
        host = address[0]
        return host in ("localhost", "::1") or str(host).startswith("127.")
    return True  # unix sockets


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Every test is offline: a connection to anything but loopback fails the test."""
    original_connect = socket.socket.connect

    def guarded_connect(self, address):
        if not _is_loopback(address):
            raise AssertionError(f"test tried to open a network connection to {address!r}")
        return original_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    yield


@pytest.fixture(autouse=True, scope="session")
def run_from_repo_root():
    """Configs name data relative to the repository root, as users run them."""
    import os

    previous = os.getcwd()
    os.chdir(REPO_ROOT)
    yield
    os.chdir(previous)
