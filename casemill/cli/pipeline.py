"""`casemill demo` (the main job on the embedded defaults) and `casemill serve` (scheduled
deployments against a local Prefect server)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import typer
from rich.markup import escape

from casemill.cli import app
from casemill.cli.console import console, err_console
from casemill.demo import DEMO_AGENTS, pipeline_parameters, plan_demo, prepare_workdir
from casemill.errors import UserError


def _prefect_home() -> Path:
    return Path(".casemill/prefect")


@app.command("demo")
def demo(
    review: str = typer.Option(
        ...,
        "--review",
        help="auto: approve only candidates that pass every validator (marked auto-approved); human: wait for reviewers in 'casemill review serve'",
    ),
    workdir: Path = typer.Option(
        Path(".casemill/demo"), help="where the demo writes (wiped first)"
    ),
    agents: str = typer.Option(
        ",".join(DEMO_AGENTS),
        help="comma-separated agents; the first is the agent under test",
    ),
    per_seed: int = typer.Option(1, help="attempts of each operator chain on each seed"),
    seed: int = typer.Option(0, help="random seed"),
) -> None:
    """Mine the bundled sample log, expand the bundled seeds, review, evaluate the reference
    agent and two faulty variants, and gate, all as Prefect flows on the local machine."""
    plan = plan_demo(None, workdir, review, agents)  # the data bundled with Casemill
    started = time.monotonic()
    from casemill.flows._runtime import configure_prefect_env

    configure_prefect_env(home=_prefect_home())
    prepare_workdir(plan)
    console.print(
        f"[bold]Casemill demo[/]: working in {workdir}/ (the corpus starts as a copy of corpus/)"
    )
    console.print("Starting Prefect (its local server takes 20-60 s to start the first time) ...")
    from casemill.flows.pipeline import full_pipeline

    parameters = pipeline_parameters(plan, per_seed=per_seed, seed=seed)
    state = full_pipeline(**parameters, return_state=True)
    _print_outcome(state, workdir, plan.corpus, time.monotonic() - started)


def _print_outcome(state, workdir: Path, corpus: Path, elapsed: float) -> None:  # noqa: ANN001
    from casemill.corpus import CorpusStore

    try:
        result = state.result()
        failed = None
    except Exception as exc:  # noqa: BLE001 - the gate failing is an outcome to report
        result, failed = None, exc
    latest = CorpusStore(corpus).latest()
    console.rule("Casemill demo: where everything is")
    if latest:
        console.print(
            f"corpus        {corpus}/  version {latest.name}, {latest.active_count} active cases (manifest {corpus}/manifests/{latest.name}.json)"
        )
    db = f"sqlite:///{workdir}/review.db"
    waiting = ""
    if result:
        from casemill.review.store import ReviewStore

        status = ReviewStore.open(db).batch_status(result["batch_id"])
        waiting = f": {status.approved} approved, {status.rejected} rejected, {status.pending} waiting for a person"
    console.print(f"review record {workdir}/review.db{waiting}")
    console.print(
        f"              see it: casemill review status --db {db}; decide: casemill review serve --db {db}"
    )
    if result:
        for ev in result["evaluations"]:
            verdict = {
                True: "[green]gate passed[/]",
                False: "[red]gate FAILED[/]",
                None: "no gate",
            }[ev["gate_passed"]]
            rate = ev["task_success_rate"]
            agent = escape(ev["agent"])  # a spec, not markup
            console.print(f"report        {agent}: task success {rate:.1%}, {verdict}")
            console.print(f"              {ev['run_dir']}/report.html", soft_wrap=True)
    home = os.environ.get("PREFECT_HOME", str(_prefect_home().resolve()))
    console.print(
        f"Prefect UI    PREFECT_HOME={home} uv run prefect server start  ->  http://127.0.0.1:4200 (the demo's flow runs are stored there)"
    )
    console.print(f"finished in {elapsed:.0f} s")
    if failed is not None:
        err_console.print(f"[red]the pipeline failed:[/] {escape(str(failed))}", highlight=False)
        raise typer.Exit(1)


def _check_team_server(api_url: str, served: list) -> None:
    """Refuse to serve on a server that does not answer, or whose workers run deployments of
    the names `serve` would take over."""
    from casemill.flows.server import check_reachable, pooled_deployments, shown_url

    check_reachable(api_url)
    taken = pooled_deployments(served)
    if taken:
        raise UserError(
            f"the Prefect server at PREFECT_API_URL={shown_url(api_url)} runs "
            f"{', '.join(taken)} on its workers (prefect deploy --all); serving here would take "
            "them over and pause them when it stops. Leave them to the workers "
            "(docs/prefect-server.md), or unset PREFECT_API_URL to serve on a local server"
        )


@app.command("serve")
def serve(
    only: list[str] = typer.Option([], "--only", help="expand, mine or evaluate (default: all)"),
    port: int = typer.Option(
        4200, help="port of the local Prefect server to start when PREFECT_API_URL is not set"
    ),
) -> None:
    """Serve the scheduled deployments (nightly expansion, log mining, evaluation).

    With PREFECT_API_URL set, they are registered on that server; otherwise a local Prefect
    server is started first (cron schedules do not fire on the ephemeral one)."""
    from casemill.flows._runtime import configure_prefect_env
    from casemill.flows.deployments import DEFAULT_CRONS

    unknown = [name for name in only if name not in DEFAULT_CRONS]
    if unknown:  # checked before a server starts: it would serve nothing, for ever
        raise UserError(
            f"--only {', '.join(unknown)}: no such deployment; choose from "
            f"{', '.join(DEFAULT_CRONS)}"
        )
    configure_prefect_env(home=_prefect_home())
    server = None
    if not os.environ.get("PREFECT_API_URL"):
        from casemill.flows.server import LocalPrefectServer

        console.print(f"starting a local Prefect server on 127.0.0.1:{port} ...")
        server = LocalPrefectServer(Path(os.environ["PREFECT_HOME"]), port=port).start()
        os.environ["PREFECT_API_URL"] = server.api_url
        console.print(f"Prefect UI at {server.ui_url}")
    try:
        from prefect import serve as prefect_serve
        from prefect.settings import PREFECT_API_URL, temporary_settings

        from casemill.flows.deployments import deployments

        served = deployments(only or None)
        if server is None:
            _check_team_server(os.environ["PREFECT_API_URL"], served)
        # Prefect read its settings when it was imported (before the server above existed):
        # without this it would start a temporary server of its own and serve against that
        api = {PREFECT_API_URL: server.api_url} if server is not None else {}
        with temporary_settings(updates=api):
            prefect_serve(*served)
    finally:
        if server is not None:
            server.stop()
