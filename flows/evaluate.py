"""Prefect entrypoint `flows/evaluate.py:evaluate_agent` (named by prefect.yaml); the flow is `casemill.flows.evaluate.evaluate_agent`."""

from casemill.flows.evaluate import evaluate_agent

__all__ = ["evaluate_agent"]
