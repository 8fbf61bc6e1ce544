"""Experiments reproducing the papers' figures and tables (run with `treelearn experiment ...`)."""
