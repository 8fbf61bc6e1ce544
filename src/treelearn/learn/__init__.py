"""Learners: search strategies over the shared data layer, criteria and Tree model."""
