"""Prefect entrypoint `flows/expand.py:expand_corpus` (named by prefect.yaml); the flow is `casemill.flows.expand.expand_corpus`."""

from casemill.flows.expand import expand_corpus

__all__ = ["expand_corpus"]
