"""The demo's plan: the bundled inputs it runs the full pipeline on, its work folder, and the
pipeline's parameters (`casemill demo` presents; `casemill.flows.pipeline` runs).

The demo mines the bundled sample log, expands the bundled seeds, reviews into a copy of the
bundled corpus (the project's own corpus is never written), and evaluates the reference agent
and two faulty variants against the default gate.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casemill.bundled import data_path
from casemill.errors import UserError

DEMO_VARIANTS = ("reference:refund_whole_order", "reference:obeys_injection")
DEMO_AGENTS = ("reference", *DEMO_VARIANTS)
REVIEW_POLICIES = ("auto", "human")


@dataclass(frozen=True)
class DemoPlan:
    """Where the demo reads (the data bundled with Casemill, or a folder `project` laid out as
    a Casemill checkout) and writes (`workdir`)."""

    project: Path | None
    workdir: Path
    review: str
    agents: tuple[str, ...]

    @property
    def seeds(self) -> Path:
        return self._data("seeds")

    @property
    def sample_log(self) -> Path:
        return self._data("samples", "support_logs.jsonl")

    @property
    def corpus_source(self) -> Path:
        return self._data("corpus")

    @property
    def corpus(self) -> Path:
        """The demo's corpus: a copy of the bundled one, in the work folder."""
        return self.workdir / "corpus"

    @property
    def gate(self) -> Path:
        return self._data("gates", "default.toml")

    def _data(self, name: str, *parts: str) -> Path:
        return self.project.joinpath(name, *parts) if self.project else data_path(name, *parts)

    @property
    def review_db(self) -> str:
        """The demo's own review queue, whatever queue is configured."""
        return f"sqlite:///{self.workdir.resolve()}/review.db"


def plan_demo(project: Path | None, workdir: Path, review: str, agents: str) -> DemoPlan:
    """The demo's plan, its settings and bundled inputs checked: `review` is `auto` or
    `human`, `agents` a comma-separated list (the first is the agent under test); `project`
    None reads the data bundled with Casemill."""
    if review not in REVIEW_POLICIES:
        raise UserError(f"--review {review!r}: use 'auto' or 'human'")
    names = tuple(a.strip() for a in agents.split(",") if a.strip())
    plan = DemoPlan(project=project, workdir=workdir, review=review, agents=names)
    for needed in (plan.seeds, plan.sample_log, plan.corpus_source / "manifests"):
        if not needed.exists():
            raise UserError(
                f"{needed} is missing: the demo's data is incomplete; reinstall Casemill "
                "(uv sync in a checkout)"
            )
    return plan


def prepare_workdir(plan: DemoPlan) -> None:
    """The work folder wiped, and the bundled corpus copied into it."""
    if plan.workdir.exists():
        shutil.rmtree(plan.workdir)
    shutil.copytree(plan.corpus_source, plan.corpus)


def pipeline_parameters(plan: DemoPlan, *, per_seed: int, seed: int) -> dict[str, Any]:
    """The `full-pipeline` flow's parameters for the demo."""
    return {
        "seeds": str(plan.seeds),
        "logs": [str(plan.sample_log)],
        "workdir": str(plan.workdir),
        "corpus_dir": str(plan.corpus),
        "review_db": plan.review_db,
        "review": plan.review,
        "agents": list(plan.agents),
        "gate": str(plan.gate),
        "per_seed": per_seed,
        "seed": seed,
    }
