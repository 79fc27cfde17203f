"""Helpers for `scripts/build_seeds.py`: the customer and product catalogue, an environment
builder, a case builder that derives reply phrases and step counts from the expected calls, and
the seed definitions grouped by theme."""
