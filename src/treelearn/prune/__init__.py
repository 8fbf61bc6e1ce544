"""Generalization bounds of tree structures and pruning."""
