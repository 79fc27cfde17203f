"""Prefect entrypoint `flows/review.py:review_batch` (named by prefect.yaml); the flow is `casemill.flows.review.review_batch`."""

from casemill.flows.review import review_batch

__all__ = ["review_batch"]
