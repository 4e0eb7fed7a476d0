"""compat.patching: one replacement per target however often the fixes are applied, and rebinding by name."""
import sys
import types

from allennlp.common import params, util as common_util
from allennlp.nn import util as nn_util
from allennlp.training import checkpointer, gradient_descent_trainer

from memplugins import compat
from memplugins.compat.patching import original_of, patch
from memplugins.training import exact_resume


def test_patch_replaces_once_and_keeps_the_original():
    owner = types.SimpleNamespace(f=lambda x: x + 1)
    original = owner.f
    assert patch(owner, "f", lambda previous: (lambda x: 10 * previous(x)))
    assert owner.f(1) == 20 and original_of(owner.f) is original
    assert not patch(owner, "f", lambda previous: (lambda x: 0))  # already ours: unchanged
    assert owner.f(1) == 20


def test_rebind_reaches_modules_that_imported_the_name():
    owner = types.ModuleType("memplugins_test_owner")
    owner.g = lambda: "original"
    user = types.ModuleType("memplugins_test_user")
    user.g = owner.g  # `from owner import g`
    sys.modules.update({owner.__name__: owner, user.__name__: user})
    try:
        patch(owner, "g", lambda previous: (lambda: "patched"), rebind=True)
        assert user.g() == "patched"
    finally:
        del sys.modules[owner.__name__], sys.modules[user.__name__]


def test_applying_every_fix_again_changes_nothing():
    targets = [(nn_util, "tiny_value_of_dtype"), (common_util, "get_spacy_model"), (params, "_environment_variables"),
               (checkpointer.Checkpointer, "load_checkpoint"), (gradient_descent_trainer.GradientDescentTrainer, "_train_epoch")]
    before = [getattr(owner, name) for owner, name in targets]
    compat.apply()
    exact_resume.apply()
    assert [getattr(owner, name) for owner, name in targets] == before
    assert all(original_of(value) is not value for value in before)  # each is one of ours, over the original
