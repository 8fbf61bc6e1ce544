"""The ``treelearn`` command line.

    treelearn fit data.csv --label class --learner topk --k 3 --max-depth 4 --out model.json
    treelearn predict model.json new.csv [--out predictions.csv] [--format text|csv|json]
    treelearn show model.json [--format text|dot|json|html]
    treelearn evaluate model.json test.csv [--format text|csv|json]
    treelearn export model.json --format python|c|sql|onnx [--out FILE]
    treelearn demo [--out-dir results/demo]
    treelearn experiment NAME [ARGS...]

Models are the JSON documents of :func:`treelearn.tree.export.tree_to_json` (never pickles).
Errors in the input (missing or unreadable files, unknown columns, malformed models, bad
parameter values, numeric columns with cells that are not numbers) print one line on stderr and
exit with code 2; the other exit codes are in :mod:`treelearn.cli.common`. Importing this
package imports neither scikit-learn, SciPy, pandas, matplotlib nor Dask: each command imports
what it needs.
"""
from treelearn.cli.group import app, available_experiments, main
from treelearn.cli.commands import evaluation_report
from treelearn.cli.common import (
    EXIT_BAD_INPUT, EXIT_DONE, EXIT_INTERRUPTED, EXIT_INTERRUPTED_SAVED, EXIT_LIMIT, CLIError,
)
from treelearn.cli.csvio import read_csv
from treelearn.cli.fit import make_learner
from treelearn.cli.model import MAX_MODEL_BYTES

__all__ = ["app", "main", "make_learner", "available_experiments", "evaluation_report", "read_csv", "CLIError",
           "MAX_MODEL_BYTES", "EXIT_DONE", "EXIT_BAD_INPUT", "EXIT_LIMIT", "EXIT_INTERRUPTED_SAVED",
           "EXIT_INTERRUPTED"]
