"""scikit-learn's estimator checks on MinRankTreeClassifier.

The checks that feed identical rows with different labels are expected to fail: no decision
tree is consistent with such a sample, and the estimator reports it (InconsistentSampleError)
instead of searching, as FIND / FINDMIN (001) require a consistent sample.
"""
from sklearn.utils.estimator_checks import parametrize_with_checks

from treelearn import MinRankTreeClassifier

_INCONSISTENT = "the check's data has identical rows with different labels: no consistent tree exists (001)"
EXPECTED = {name: _INCONSISTENT for name in [
    "check_fit_score_takes_y", "check_positive_only_tag_during_fit", "check_sample_weights_list",
    "check_estimators_nan_inf", "check_classifiers_train", "check_supervised_y_2d", "check_fit_idempotent",
    "check_fit_check_is_fitted", "check_n_features_in"]}

EXPECTED["check_class_weight_classifiers"] = (
    "a consistent tree (001) fits every training row, so class weights cannot change its leaves, and a minimum "
    "leaf weight (what scikit-learn's tree passes the check with) would contradict consistency")


@parametrize_with_checks([MinRankTreeClassifier(time_limit=20)], expected_failed_checks=lambda est: EXPECTED)
def test_sklearn_compatible(estimator, check):
    check(estimator)
