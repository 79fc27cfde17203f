"""Run an agent on cases: concurrent, time-limited, retried, resumable, nothing dropped.

`run(agent, cases, run_dir)` gives the agent each case `trials` times, at most `concurrency` at
a time (an asyncio semaphore; sync agents run in their own threads), each within `timeout_s`,
and returns one `Trajectory` per (case, trial) in input order. Every finished trajectory is
appended to `RUN_DIR/trajectories.jsonl` at once (see `run_store`), keyed by (case id, trial,
agent fingerprint): a re-run does only what is missing, and with `rerun_failed` also what ended
in an error. A case that cannot run still gets a trajectory, with `error` and `error_kind`
(`timeout`, `exception`, `http_429`, `http_5xx`, `invalid_json`, `invalid_reply`,
`malformed_tool_call`, `unknown_tool`, `no_simulator`, ...).

Transient failures of a whole case (its time limit, or an adapter's transport errors after the
adapter's own per-request retries) are retried from a fresh sandbox per `retry` (default: one
more attempt), with exponential backoff and jitter seeded by `seed`, case and trial. An adapter
does not wait for a retry past the case's time limit (`Episode.deadline`): it raises the error it
has, so a refused connection is recorded as `connection`, not as a time-out.

An agent that is down is not retried on every case: once a trial ended in a `connection` error
(after all its retries) before any trial reached the agent, or `unreachable_after` trials in a
row did later, the trials not yet started are recorded at once with that error (`not run: ...`),
until a trial still running reaches the agent. `rerun_failed` runs them again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from casemill.case.ids import short_hash
from casemill.case.model import Case
from casemill.evaluation.agents import (
    TRANSIENT_KINDS,
    Agent,
    AgentError,
    AgentReply,
    Episode,
    EpisodeClosed,
    StepLimitReached,
    load_agent,
    new_episode,
)
from casemill.evaluation.agents.retry import RetryPolicy
from casemill.evaluation.conversation import Conversation, turn_messages
from casemill.evaluation.customer import DEFAULT_MAX_TURNS, Customer, ScriptedCustomer
from casemill.evaluation.run_store import RunStore
from casemill.evaluation.states import state_delta
from casemill.evaluation.trajectory import NOT_COVERED, Trajectory
from casemill.gctune import fewer_collections
from casemill.llm import masked
from casemill.settings import Settings
from casemill.text import count

log = logging.getLogger(__name__)

SCRIPTED = ScriptedCustomer()
CASE_RETRY = RetryPolicy(attempts=2, base_s=0.5, max_s=4.0)
UNREACHABLE_AFTER = 3  # trials in a row that could not connect, once one connected: agent down

Progress = Callable[[int, int], None]


def run(
    agent_spec_or_agent: str | Agent,
    cases: Sequence[Case],
    run_dir: Path,
    *,
    trials: int = 1,
    concurrency: int = 8,
    timeout_s: float = 60.0,
    max_steps: int = 20,
    rerun_failed: bool = False,
    progress: bool | Progress = False,
    settings: Settings | None = None,
    retry: RetryPolicy = CASE_RETRY,
    seed: int = 0,
    unreachable_after: int = UNREACHABLE_AFTER,
    customer: Customer | None = None,
    max_customer_turns: int = DEFAULT_MAX_TURNS,
) -> list[Trajectory]:
    """Blocking wrapper of `run_async` (starts its own event loop), with fewer garbage
    collections while it runs (`casemill.gctune`)."""
    with fewer_collections():
        return asyncio.run(
            run_async(
                agent_spec_or_agent,
                cases,
                run_dir,
                trials=trials,
                concurrency=concurrency,
                timeout_s=timeout_s,
                max_steps=max_steps,
                rerun_failed=rerun_failed,
                progress=progress,
                settings=settings,
                retry=retry,
                seed=seed,
                unreachable_after=unreachable_after,
                customer=customer,
                max_customer_turns=max_customer_turns,
            )
        )


async def run_async(
    agent_spec_or_agent: str | Agent,
    cases: Sequence[Case],
    run_dir: Path,
    *,
    trials: int = 1,
    concurrency: int = 8,
    timeout_s: float = 60.0,
    max_steps: int = 20,
    rerun_failed: bool = False,
    progress: bool | Progress = False,
    settings: Settings | None = None,
    retry: RetryPolicy = CASE_RETRY,
    seed: int = 0,
    unreachable_after: int = UNREACHABLE_AFTER,
    customer: Customer | None = None,
    max_customer_turns: int = DEFAULT_MAX_TURNS,
) -> list[Trajectory]:
    """Run the agent on every (case, trial) not yet done; see the module docstring
    (`unreachable_after` 0: every trial is tried, however many could not connect before;
    `customer`: the simulated customer, scripted by default, up to `max_customer_turns` turns
    an episode unless a case says otherwise)."""
    if (
        trials < 1
        or concurrency < 1
        or max_steps < 1
        or timeout_s <= 0
        or unreachable_after < 0
        or max_customer_turns < 0
    ):
        raise ValueError(
            "trials, concurrency and max_steps must be >= 1, timeout_s > 0 and "
            "unreachable_after, max_customer_turns >= 0"
        )
    agent = (
        load_agent(agent_spec_or_agent, settings)
        if isinstance(agent_spec_or_agent, str)
        else agent_spec_or_agent
    )
    agent = with_customer(agent, customer, max_customer_turns)
    store = RunStore(run_dir)
    store.repair()
    results = {(k[0], k[1]): t for k, t in store.load(agent.fingerprint).items()}
    unique = list({case.id: case for case in cases}.values())
    todo = [
        (case, trial)
        for case in unique
        for trial in range(trials)
        if (case.id, trial) not in results
        or (rerun_failed and results[(case.id, trial)].ended_in_error)
    ]
    log.info(
        "%s: %d of %d case x trial runs to do (%d done before)",
        agent.name,
        len(todo),
        len(unique) * trials,
        len(unique) * trials - len(todo),
    )
    secrets = _secrets(settings)
    report = _progress_reporter(progress, len(todo))
    semaphore = asyncio.Semaphore(concurrency)
    writer = GroupWriter(store)
    down = Unreachable(agent, unreachable_after)
    finished = 0

    async def one(case: Case, trial: int) -> None:
        nonlocal finished
        async with semaphore:
            if down.tripped:
                trajectory = down.not_run(case, trial)
            else:
                trajectory = await run_case(
                    agent,
                    case,
                    trial,
                    timeout_s=timeout_s,
                    max_steps=max_steps,
                    retry=retry,
                    seed=seed,
                    customer=customer,
                    max_customer_turns=max_customer_turns,
                )
                down.saw(trajectory)
        trajectory = _masked(trajectory, secrets)
        await writer.append(trajectory)  # durable before it counts as done
        results[(case.id, trial)] = trajectory
        finished += 1
        report(finished, len(todo))

    try:
        await asyncio.gather(*(one(case, trial) for case, trial in todo))
    finally:
        writer.close()  # finished trajectories still queued are written before returning
        report(-1, len(todo))
    return [results[(case.id, trial)] for case in cases for trial in range(trials)]


class _WithCustomer:
    """An agent whose fingerprint, the resume key of the run store, names the simulated
    customer too: a run folder re-run with another customer does not reuse the trials of the
    first (the default scripted customer keeps the agent's own fingerprint)."""

    def __init__(self, agent: Agent, fingerprint: str):
        self.agent, self.name, self.fingerprint = agent, agent.name, fingerprint

    async def run(self, episode: Episode) -> AgentReply:
        return await self.agent.run(episode)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)


def with_customer(agent: Agent, customer: Customer | None, max_turns: int) -> Agent:
    kind = (customer or SCRIPTED).fingerprint
    if kind == SCRIPTED.fingerprint and max_turns == DEFAULT_MAX_TURNS:
        return agent
    return _WithCustomer(agent, short_hash(f"{agent.fingerprint}|{kind}|{max_turns}"))


class Unreachable:
    """A circuit breaker for an agent that is down. It counts the trials in a row that ended in
    a `connection` error (the adapter's and the case's retries spent) and trips after one such
    trial while no trial has reached the agent yet (a wrong port, an agent not started), or
    after `after` in a row once one has (0: never). A trial that reached the agent
    closes it again; trials that never asked the agent (no sandbox, no simulator) change
    nothing."""

    NOT_ASKED = frozenset({"environment", "no_simulator", NOT_COVERED})

    def __init__(self, agent: Agent, after: int):
        self.agent = agent
        self.after = after
        self.reached = False
        self.in_a_row = 0
        self.last = ""

    @property
    def tripped(self) -> bool:
        needed = self.after if self.reached else 1
        return self.after > 0 and self.in_a_row >= needed

    def saw(self, trajectory: Trajectory) -> None:
        if trajectory.error_kind == "connection":
            was = self.tripped
            self.in_a_row += 1
            self.last = trajectory.error or ""
            if self.tripped and not was:
                log.warning(
                    "%s could not be reached (%s); the trials not started yet are recorded as "
                    "not run",
                    self.agent.name,
                    self.last,
                )
        elif trajectory.error_kind not in self.NOT_ASKED:
            self.reached, self.in_a_row = True, 0

    def not_run(self, case: Case, trial: int) -> Trajectory:
        """The trajectory of a trial not started because the agent seems to be down."""
        tried = count(self.in_a_row, "trial")
        why = (
            f"the last {tried} could not connect, retries included"
            if self.reached
            else f"no trial has reached it ({tried} could not connect, retries included)"
        )
        return Trajectory(
            case_id=case.id,
            trial=trial,
            agent=self.agent.name,
            agent_fingerprint=self.agent.fingerprint,
            error=f"not run: the agent seems to be down: {why}; last error: {self.last}",
            error_kind="connection",
        )


def _secrets(settings: Settings | None) -> tuple[str, ...]:
    """The configured API keys (Casemill's own and `OPENAI_API_KEY`), to mask in trajectories."""
    import os

    _, _, key = (settings or Settings()).resolved_llm()
    found = {key.get_secret_value() if key else "", os.environ.get("OPENAI_API_KEY", "")}
    return tuple(sorted(k for k in found if k))


def _masked(trajectory: Trajectory, secrets: tuple[str, ...]) -> Trajectory:
    """`trajectory` with every configured API key in any of its strings as `***` (an error, the
    reply, message contents and their parts, tool-call names, arguments and results, the final
    state, keys included): any agent (a Python agent's exception quoting its client's key, a
    reply echoing it, a call made with it) may carry one, and trajectories feed every file of
    the run and the logs."""
    if not secrets or not _holds_secret(trajectory, secrets):
        return trajectory  # the common case, decided on its JSON (serialised in Rust)
    changed = False

    def mask(value: Any) -> Any:
        nonlocal changed
        if isinstance(value, str):
            out = masked(value, secrets)
            changed = changed or out != value
            return out
        if isinstance(value, dict):
            return {mask(k): mask(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [mask(v) for v in value]
        return value

    data = mask(trajectory.model_dump())
    return Trajectory.model_validate(data) if changed else trajectory


def _holds_secret(trajectory: Trajectory, secrets: tuple[str, ...]) -> bool:
    """Whether a secret `masked` would mask is anywhere in `trajectory`: in its JSON as it is,
    or as JSON escapes it (a quote, a backslash, a control character)."""
    dumped = trajectory.__pydantic_serializer__.to_json(trajectory).decode("utf-8")
    return any(
        secret in dumped or json.dumps(secret, ensure_ascii=False)[1:-1] in dumped
        for secret in secrets
        if len(secret) >= 4
    )


class GroupWriter:
    """Appends finished trajectories to the run store from one writer thread, a batch per
    fsync (group commit): whatever finished while the previous batch was being written goes in
    the next one. `append` returns once its record is on disk."""

    def __init__(self, store: RunStore):
        self.store = store
        self.pending: list[tuple[Trajectory, asyncio.Future[None]]] = []
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="run-store")
        self.busy = False

    async def append(self, trajectory: Trajectory) -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self.pending.append((trajectory, done))
        if not self.busy:
            self.busy = True
            loop.create_task(self._drain())
        await done

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self.pending:
                batch, self.pending = self.pending, []
                try:
                    await loop.run_in_executor(
                        self.executor, self.store.append, [t for t, _ in batch]
                    )
                except Exception as exc:  # noqa: BLE001 - handed to every waiting case
                    for _, done in batch:
                        if not done.done():
                            done.set_exception(exc)
                else:
                    for _, done in batch:
                        if not done.done():
                            done.set_result(None)
        finally:
            self.busy = False

    def close(self) -> None:
        """Wait for the batch being written, then write what is still queued (an interrupted
        run keeps every trajectory that finished)."""
        self.executor.shutdown(wait=True)
        left, self.pending = [t for t, _ in self.pending], []
        if left:
            self.store.append(left)


async def run_case(
    agent: Agent,
    case: Case,
    trial: int,
    *,
    timeout_s: float,
    max_steps: int,
    retry: RetryPolicy = CASE_RETRY,
    seed: int = 0,
    sleep: Callable[[float], Any] = asyncio.sleep,
    customer: Customer | None = None,
    max_customer_turns: int = DEFAULT_MAX_TURNS,
) -> Trajectory:
    """One (case, trial), retried from a fresh sandbox on transient failure."""
    rng = random.Random(f"{seed}:{case.id}:{trial}")
    for attempt in range(1, retry.attempts + 1):
        trajectory = await _attempt(
            agent,
            case,
            trial,
            timeout_s=timeout_s,
            max_steps=max_steps,
            customer=customer,
            max_customer_turns=max_customer_turns,
        )
        if (
            trajectory.error_kind not in TRANSIENT_KINDS
            or trajectory.error is None
            or attempt == retry.attempts
        ):
            return trajectory
        wait = retry.delay(attempt, rng)
        log.info(
            "case %s trial %d: %s; attempt %d in %.2fs",
            case.id,
            trial,
            trajectory.error_kind,
            attempt + 1,
            wait,
        )
        await sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


async def _attempt(
    agent: Agent,
    case: Case,
    trial: int,
    *,
    timeout_s: float,
    max_steps: int,
    customer: Customer | None = None,
    max_customer_turns: int = DEFAULT_MAX_TURNS,
) -> Trajectory:
    started = time.perf_counter()
    base = {
        "case_id": case.id,
        "trial": trial,
        "agent": agent.name,
        "agent_fingerprint": agent.fingerprint,
    }
    try:
        episode = new_episode(case, max_steps=max_steps)
    except NotImplementedError as exc:
        return Trajectory(**base, error=str(exc), error_kind="no_simulator")
    except Exception as exc:  # noqa: BLE001 - a bad environment is this case's error, not the run's
        return Trajectory(
            **base, error=f"cannot build the sandbox: {exc}", error_kind="environment"
        )
    reply, error = None, None
    episode.deadline = time.monotonic() + timeout_s  # adapters do not wait for a retry past it
    try:  # a pack's customer facts, a model customer's prompt: this case's error, not the run's
        session = (customer or SCRIPTED).session(case)
    except Exception as exc:  # noqa: BLE001
        episode.close()
        message = f"cannot start the simulated customer: {type(exc).__name__}: {exc}"
        return Trajectory(**base, error=message, error_kind="user_simulator")
    talk = Conversation(episode, session, case, max_customer_turns)
    try:
        async with asyncio.timeout(timeout_s):  # no extra task per case, unlike wait_for
            reply = await talk.run(agent)
    except TimeoutError:
        error = AgentError("timeout", f"no reply within the {timeout_s:g}s time limit")
    except StepLimitReached:
        reply = AgentReply(None, hit_step_limit=True)
    except EpisodeClosed as exc:
        error = AgentError("timeout", str(exc))
    except AgentError as exc:
        error = exc
    except Exception as exc:  # noqa: BLE001 - the agent's failure becomes data
        error = AgentError("exception", f"{type(exc).__name__}: {exc}")
    finally:
        episode.close()
    return _trajectory(base, talk, reply, error, time.perf_counter() - started)


def _trajectory(
    base: dict,
    talk: Conversation,
    reply: AgentReply | None,
    error: AgentError | None,
    latency: float,
) -> Trajectory:
    episode = talk.episode
    reply = reply or AgentReply(None)
    text = reply.text if isinstance(reply.text, str) else None
    kind, message = (
        (error.kind, str(error))
        if error
        else (episode.agent_faults[0] if episode.agent_faults else (None, None))
    )
    if reply.messages is not None:
        messages = reply.messages
    elif talk.turns:
        messages = turn_messages(episode, text, talk.turn_started)
    else:  # the case's conversation, the calls and the reply: `rebuilt_messages` makes them
        messages = []
    return Trajectory(
        **base,
        messages=tuple(talk.marked(messages)),
        calls=tuple(episode.calls),
        final_reply=text,
        steps=len(episode.calls) + (1 if (text or "").strip() else 0),
        latency_s=round(latency, 6),
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        **_final_state(episode),
        hit_step_limit=reply.hit_step_limit,
        gave_up=reply.gave_up,
        customer_turns=talk.turns,
        hit_turn_limit=talk.hit_limit,
        customer_ended=talk.ended or None,
        error=message,
        error_kind=kind,
    )


def _final_state(episode: Episode) -> dict[str, Any]:
    """The trajectory's final state, and what changed since the start (`state_changes`, which
    is what the run store keeps: `run_store.stored`)."""
    final = episode.sandbox.comparable_state()
    if isinstance(final, dict) and isinstance(episode.initial_state, dict):
        return {"final_state": final, "state_changes": state_delta(episode.initial_state, final)}
    return {"final_state": final}


def _progress_reporter(progress: bool | Progress, total: int) -> Progress:
    if callable(progress):
        return lambda done, n: progress(done, n) if done >= 0 else None
    if not progress or total == 0:
        return lambda done, n: None
    from rich.progress import Progress as RichProgress  # the one Rich use: asked for by the caller

    bar = RichProgress(transient=False)
    task = bar.add_task("running", total=total)
    bar.start()

    def report(done: int, n: int) -> None:
        if done < 0:
            bar.stop()
        else:
            bar.update(task, completed=done)

    return report
