"""Agents for the runner tests: a slow one that logs each invocation (for the kill tests)."""

from __future__ import annotations

import os
import re
import time


def agent(episode):
    with open(os.environ["CASEMILL_TEST_AGENT_LOG"], "a") as fh:
        fh.write(episode.case_id + "\n")
    time.sleep(float(os.environ.get("CASEMILL_TEST_AGENT_DELAY", "0.05")))
    result = episode.call(
        "get_order", {"order_id": re.search(r"W\d{4}", episode.messages[-1]["content"]).group(0)}
    )
    return f"order status {result.content['status']}"


agent.version = "1"
