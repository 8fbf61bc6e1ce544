"""The greedy learner's room: ID3/C4.5/CART/Kearns–Mansour trees grown depth-first or best-first
(paper 000), its compiled growth (``grow.h`` and the headers beside it) and its row-shard counting."""
from treelearn.learn.greedy.estimator import GreedyTreeClassifier, code_features, grow_greedy
from treelearn.learn.greedy.regressor import GreedyTreeRegressor

__all__ = ["GreedyTreeClassifier", "GreedyTreeRegressor", "grow_greedy", "code_features"]
