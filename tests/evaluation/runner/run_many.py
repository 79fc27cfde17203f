"""Run the slow agent on N cases in RUN_DIR (a child process the kill tests interrupt)."""

from __future__ import annotations

import sys
from pathlib import Path

from casemill.evaluation.runner import run
from tests.evaluation.agents.support_cases import many_cases

if __name__ == "__main__":
    run_dir, n = Path(sys.argv[1]), int(sys.argv[2])
    run("python:tests.evaluation.runner.slow_agent:agent", many_cases(n), run_dir, concurrency=4)
