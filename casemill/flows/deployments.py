"""The scheduled deployments `casemill serve` runs (and `prefect.yaml` declares for work pools).

- `expand-nightly`: expand the seeds into candidates every night;
- `mine-logs-nightly`: mine the configured log folder (`CASEMILL_LOG_DIR`, default `logs/`);
- `evaluate-nightly`: evaluate the reference agent (or `CASEMILL_AGENT`) on the corpus.
Cron expressions can be overridden with `CASEMILL_CRON_EXPAND`, `CASEMILL_CRON_MINE`,
`CASEMILL_CRON_EVALUATE` (for example `* * * * *` to watch one fire).
"""

from __future__ import annotations

import os
from typing import Any

DEFAULT_CRONS = {"expand": "0 2 * * *", "mine": "30 1 * * *", "evaluate": "0 4 * * *"}


def cron(name: str) -> str:
    return os.environ.get(f"CASEMILL_CRON_{name.upper()}", DEFAULT_CRONS[name])


def deployments(only: list[str] | None = None) -> list[Any]:
    from casemill.flows.evaluate import evaluate_agent
    from casemill.flows.expand import expand_corpus
    from casemill.flows.mine import mine_logs

    log_dir = os.environ.get("CASEMILL_LOG_DIR", "logs")
    made = {
        "expand": expand_corpus.to_deployment(
            name="expand-nightly",
            cron=cron("expand"),
            parameters={"seeds": "seeds", "out": "candidates/expanded.jsonl"},
            tags=["casemill"],
        ),
        "mine": mine_logs.to_deployment(
            name="mine-logs-nightly",
            cron=cron("mine"),
            parameters={"logs": [f"{log_dir}/**/*.jsonl"], "out": "candidates/mined.jsonl"},
            tags=["casemill"],
        ),
        "evaluate": evaluate_agent.to_deployment(
            name="evaluate-nightly",
            cron=cron("evaluate"),
            parameters={
                "agent": os.environ.get("CASEMILL_AGENT", "reference"),
                "cases": "corpus",
                "run_dir": "runs/nightly/{date}",  # a folder a night (the same one would resume)
                "gate": "gates/default.toml",
            },
            tags=["casemill"],
        ),
    }
    return [d for key, d in made.items() if not only or key in only]
