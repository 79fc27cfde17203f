"""The `full-pipeline` flow: mine logs, expand seeds, review, evaluate; and the demo's plan.

Each stage is its own flow (a subflow here), so a stage can also run alone or on its own
schedule. The first agent is the agent under test: the pipeline fails when its gate fails. The
others (for example faulty variants of the reference agent) are evaluated beside it, so their
reports show what the corpus catches.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from casemill.evaluation.agents import takes_temperature
from casemill.flows._runtime import default_task_runner
from casemill.flows.evaluate import GateFailed, dated_run_dir, evaluate_agent
from casemill.flows.expand import expand_corpus
from casemill.flows.mine import mine_logs
from casemill.io.jsonl import atomic_write_text, read_jsonl
from casemill.text import count


@task(name="gather-candidates", cache_policy=NO_CACHE)
def gather_candidates(files: list[str], out: str) -> tuple[str, int]:
    """Concatenate candidate files into one review batch file; the batch id is a hash of it."""
    lines: list[str] = []
    for path in files:
        for line in read_jsonl(path):
            if line.error is None:
                lines.append(line.raw.decode("utf-8") + "\n")
    atomic_write_text(out, lines)
    digest = hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()[:12]
    return f"batch-{digest}", len(lines)


def review_db_url(review_db: str | None, work: Path) -> str | None:
    """The review queue the pipeline's batch goes to, as the review subflow's `db_url`:
    `review_db`, else None for the configured queue (`CASEMILL_REVIEW_DB`, shared with the web
    app, the CLI and every worker), which the subflow reads from the settings itself, so its URL
    and password are never a flow-run parameter stored on the server; else a SQLite file in the
    work folder."""
    from casemill.settings import Settings

    if review_db:
        return review_db
    if "review_db" in Settings().model_fields_set:
        return None
    return f"sqlite:///{(work / 'review.db').resolve()}"


def check_inputs(review: str, agents: list[str], corpus_dir: str, temperature: float | None):
    """The review policy, the agents and the corpus, checked before any stage runs: a typo
    found after mining and expanding (and, for an agent, after the corpus got a new version)
    costs the run and changes the corpus."""
    from casemill.corpus import writable_corpus
    from casemill.errors import UserError
    from casemill.evaluation.agents import load_agent
    from casemill.flows.review import POLICIES

    if review not in POLICIES:
        raise UserError(f"review must be one of {', '.join(POLICIES)}, not {review!r}")
    for agent in agents:
        load_agent(agent, temperature=temperature if takes_temperature(agent) else None)
    writable_corpus(corpus_dir, "corpus_dir")


@flow(name="full-pipeline", task_runner=default_task_runner())
def full_pipeline(
    seeds: str = "seeds",
    logs: list[str] | None = None,
    log_format: str = "openai-jsonl",
    log_tools: str | None = None,
    mine_workers: int = 1,
    workdir: str = ".casemill/pipeline",
    corpus_dir: str = "corpus",
    review: str = "human",
    review_timeout_s: int = 86_400,
    review_db: str | None = None,
    agents: list[str] | None = None,
    gate: str | None = "gates/default.toml",
    per_seed: int = 2,
    chains: list[str] | None = None,
    trials: int = 1,
    concurrency: int = 16,
    temperature: float | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Mine `logs` (if any) and expand `seeds` into candidates, review them into `corpus_dir`,
    then evaluate each of `agents` on the corpus; fails when the first one's gate fails."""
    work, agents = Path(workdir), agents or ["reference"]
    check_inputs(review, agents, corpus_dir, temperature)
    mined = None
    if logs:
        mined = mine_logs(
            logs, fmt=log_format, out=str(work / "candidates" / "mined.jsonl"),
            corpus_dir=corpus_dir, seed=seed, tools=log_tools, workers=mine_workers,
        )  # fmt: skip
    expanded = expand_corpus(
        seeds=seeds, out=str(work / "candidates" / "expanded.jsonl"), corpus_dir=corpus_dir,
        chains=chains, per_seed=per_seed, seed=seed,
    )  # fmt: skip
    files = [*([mined["candidates"]] if mined else []), expanded["candidates"]]
    batch_id, reviewed = _review(
        files, work, seeds=seeds, corpus_dir=corpus_dir, policy=review,
        timeout_s=review_timeout_s, db_url=review_db_url(review_db, work),
    )  # fmt: skip
    evaluations = _evaluate_agents(
        agents, corpus_dir, work, gate=gate, trials=trials, concurrency=concurrency, seed=seed,
        temperature=temperature,
    )  # fmt: skip
    if (under_test := evaluations[0])["gate_passed"] is False:
        where = f"{under_test['run_dir']}/report.html"
        raise GateFailed(f"gate failed for the agent under test {agents[0]}: see {where}")
    return {
        "mined": mined, "expanded": expanded, "review": reviewed, "batch_id": batch_id,
        "evaluations": evaluations,
    }  # fmt: skip


def _review(files: list[str], work: Path, **settings: Any) -> tuple[str, Any]:
    """The candidate files gathered into one review batch, reviewed by the review subflow
    (waiting for people unless the policy is `auto`): the batch id and what was decided."""
    from casemill.flows.review import review_batch

    batch = work / "candidates" / "batch.jsonl"
    batch_id, gathered = gather_candidates(files, str(batch))
    policy = settings["policy"]
    get_run_logger().info(
        "review batch %s: %s, policy %s", batch_id, count(gathered, "candidate"), policy
    )
    reviewed = review_batch(
        batch_id=batch_id, cases_path=str(batch), wait=policy != "auto", **settings
    )
    return batch_id, reviewed


def run_name(agent: str) -> str:
    """The folder an agent's run gets under the pipeline run's: its spec, path-safe."""
    return agent.replace(":", "-").replace("/", "_")


def _evaluate_agents(
    agents: list[str], corpus_dir: str, work: Path, **settings: Any
) -> list[dict[str, Any]]:
    """Each agent evaluated on the corpus (a subflow each, the gate not failing it): the
    pipeline decides on the first one's verdict."""
    temperature = settings.pop("temperature")
    # one folder per pipeline run (by its scheduled start, which a retry of the run keeps, so a
    # retried run resumes its own trajectories): a later run evaluates the grown corpus afresh
    runs = work / "runs" / dated_run_dir("{datetime}")
    evaluations = []
    for agent in agents:
        state = evaluate_agent(
            agent=agent, cases=corpus_dir, run_dir=str(runs / run_name(agent)), fail_on_gate=False,
            temperature=temperature if takes_temperature(agent) else None, return_state=True,
            **settings,
        )  # fmt: skip
        evaluations.append(state.result())
    return evaluations
