"""Orchestration overhead: the full pipeline as Prefect flows vs the same work as plain calls.

Both do the same work on the same inputs: mine the bundled sample log, expand the bundled seeds
(one attempt per chain), review with the `auto` policy into a fresh copy of the corpus, evaluate
the reference agent, score, report and gate. The Prefect server is started (by a warm-up flow)
before the flow timing starts, so the figure is the orchestration cost per run, not the
server's start-up.

    uv run python bench/pipeline_overhead.py
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import description, figure  # noqa: E402


def plain(work: Path) -> int:
    from casemill.corpus import CorpusStore
    from casemill.evaluation.runner import run
    from casemill.evaluation.scoring.pipeline import evaluate_run
    from casemill.generators import ExpandConfig, expand
    from casemill.generators.seeds import load_seeds
    from casemill.mining import mine
    from casemill.review.export import export_batch
    from casemill.review.store import ReviewStore

    corpus = CorpusStore(work / "corpus")
    mined = mine([ROOT / "samples" / "support_logs.jsonl"], "openai-jsonl", existing=corpus.cases())
    seeds, _ = load_seeds(ROOT / "seeds")
    expanded = expand(seeds, ExpandConfig(per_seed=1), 0, existing=[*corpus.cases(), *seeds])
    store = ReviewStore.open(f"sqlite:///{work / 'review.db'}")
    store.enqueue([*mined.cases, *expanded.candidates], "bench", policy="auto")
    store.auto_decide("bench")
    export_batch(store, corpus, "bench")
    cases = corpus.cases()
    trajectories = run("reference", cases, work / "runs" / "reference", concurrency=16)
    evaluate_run(
        work / "runs" / "reference", cases, trajectories, gate_path=ROOT / "gates" / "default.toml"
    )
    return len(cases)


def with_flows(work: Path) -> int:
    from casemill.corpus import CorpusStore
    from casemill.flows.pipeline import full_pipeline

    full_pipeline(
        seeds=str(ROOT / "seeds"),
        logs=[str(ROOT / "samples" / "support_logs.jsonl")],
        workdir=str(work),
        corpus_dir=str(work / "corpus"),
        review="auto",
        agents=["reference"],
        gate=str(ROOT / "gates" / "default.toml"),
        per_seed=1,
        concurrency=16,
        return_state=True,
    )
    return CorpusStore(work / "corpus").latest().active_count


def fresh(base: Path, name: str) -> Path:
    work = base / name
    shutil.copytree(ROOT / "corpus", work / "corpus")
    return work


def main() -> None:
    argparse.ArgumentParser(description=description(__doc__)).parse_args()
    base = Path(tempfile.mkdtemp(prefix="casemill-overhead-"))
    os.environ.setdefault("PREFECT_HOME", str(base / "prefect"))
    from casemill.flows._runtime import configure_prefect_env

    configure_prefect_env()
    from prefect import flow

    @flow(name="warm-up")
    def warm_up() -> int:
        return 1

    t0 = time.perf_counter()
    warm_up()
    print(f"Prefect server start-up (warm-up flow): {time.perf_counter() - t0:.1f} s (not counted)")
    t0 = time.perf_counter()
    n_plain = plain(fresh(base, "plain"))
    plain_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    n_flow = with_flows(fresh(base, "flows"))
    flow_s = time.perf_counter() - t0
    overhead = flow_s - plain_s
    print(f"plain calls: {plain_s:.1f} s for a corpus of {n_plain} cases")
    print(f"Prefect flows: {flow_s:.1f} s for a corpus of {n_flow} cases")
    print(f"orchestration overhead: {overhead:.1f} s ({overhead / plain_s:.0%} of the plain time)")
    # Issue 7 asks for the figure, not a bound: it is reported, not judged.
    figure(
        "pipeline orchestration overhead (flows vs plain calls)",
        round(100 * overhead / plain_s, 1),
        "—",
        "%",
    )
    figure("pipeline orchestration overhead, absolute", round(overhead, 1), "—", "s")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
