"""Prefect entrypoint `flows/mine.py:mine_logs` (named by prefect.yaml); the flow is `casemill.flows.mine.mine_logs`."""

from casemill.flows.mine import mine_logs

__all__ = ["mine_logs"]
