"""scikit-learn's estimator checks on QueryTreeClassifier.

The learner is defined on the Boolean cube (004 §6: random examples of a monotone f over
{0, 1}^n or {±1}^n, two labels): the checks that feed real-valued X or three or more classes
are expected to fail, with the learner's named error; every other check must pass.
"""
from sklearn.utils.estimator_checks import parametrize_with_checks

from treelearn import QueryTreeClassifier

_NOT_BOOLEAN = "the check's X is real-valued; the learner needs X in {0, 1} or {-1, +1} (004 §6)"
_CLASSES = "the check has three or more classes; the learner learns Boolean functions (two labels)"
EXPECTED = {name: _NOT_BOOLEAN for name in [
    "check_positive_only_tag_during_fit", "check_estimators_dtypes", "check_sample_weights_pandas_series",
    "check_sample_weights_not_an_array", "check_sample_weights_shape", "check_sample_weights_not_overwritten",
    "check_pipeline_consistency", "check_estimators_nan_inf", "check_estimators_pickle",
    "check_classifier_data_not_an_array", "check_classifiers_classes", "check_classifiers_train",
    "check_fit2d_1feature", "check_fit_idempotent", "check_fit_check_is_fitted", "check_n_features_in"]}
EXPECTED.update({name: _CLASSES for name in [
    "check_fit_score_takes_y", "check_estimators_overwrite_params", "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self", "check_readonly_memmap_input", "check_n_features_in_after_fitting",
    "check_sample_weights_list", "check_sample_weight_equivalence_on_dense_data", "check_dtype_object",
    "check_f_contiguous_array_estimator", "check_supervised_y_2d", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_dict_unchanged", "check_fit2d_predict1d"]})

EXPECTED["check_class_weight_classifiers"] = _NOT_BOOLEAN + " (and it has three classes)"


@parametrize_with_checks([QueryTreeClassifier(size=4, epsilon=0.2, random_state=0)],
                         expected_failed_checks=lambda est: EXPECTED)
def test_sklearn_compatible(estimator, check):
    check(estimator)
