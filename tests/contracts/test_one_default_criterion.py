"""Every learner with an impurity criterion has the same default, entropy (the papers' criterion
of the greedy, Top-k and optimal learners; the choice and its reason: docs/guide/sklearn.rst)."""
import inspect

import pytest

from treelearn import GreedyTreeClassifier, OptimalTreeClassifier, PrunedTreeClassifier, TopKTreeClassifier


@pytest.mark.parametrize("cls", [GreedyTreeClassifier, TopKTreeClassifier, OptimalTreeClassifier,
                                 PrunedTreeClassifier])
def test_default_criterion_is_entropy_everywhere(cls):
    assert inspect.signature(cls.__init__).parameters["criterion"].default == "entropy"
    assert cls().get_params()["criterion"] == "entropy"
    doc = inspect.getdoc(cls)
    if "criterion :" in doc:  # (OptimalTreeClassifier documents its parameters on TopKTreeClassifier)
        assert 'default="entropy"' in doc.split("criterion :", 1)[1].split("\n")[0]
