"""Prefect entrypoint `flows/pipeline.py:full_pipeline` (named by prefect.yaml); the flow is `casemill.flows.pipeline.full_pipeline`."""

from casemill.flows.pipeline import full_pipeline

__all__ = ["full_pipeline"]
