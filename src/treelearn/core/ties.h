// The tie tolerances of the compiled learners, one definition. learn/anytime.py's ERROR_TIE is
// the same number (a test compares them through the continuous binding).
#pragma once

namespace tl {

// Two training errors (weighted misclassifications) closer than ERROR_TIE * max(1, total
// weight) are equal: exact for unit and integer weights, rounding-proof for fractional ones.
constexpr double ERROR_TIE = 1e-9;

// Two split scores or gains in normalised units (a fraction of the node's weight) closer than
// GAIN_TIE are ties, decided by the feature order.
constexpr double GAIN_TIE = 1e-12;

}  // namespace tl
