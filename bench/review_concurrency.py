"""Review queue throughput: N reviewers (threads, each claiming with a lease then deciding) make
M decisions between them, on SQLite (WAL) and on PostgreSQL. Prints enqueue and decision rates
and checks that no decision was lost or duplicated.

    uv run python bench/review_concurrency.py [--reviewers 10] [--decisions 1000] [--pg URL]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "review"))
from review_factory import child_case, seed_case  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import description, figure  # noqa: E402

from casemill.review.schema import make_engine  # noqa: E402
from casemill.review.store import ReviewStore  # noqa: E402


def run(url: str, reviewers: int, decisions: int) -> dict:
    engine = make_engine(url)
    store = ReviewStore(engine)
    parent = seed_case()
    cases = [child_case(parent, n) for n in range(decisions)]
    t0 = time.perf_counter()
    store.enqueue(cases, "bench", parents={parent.id: parent})
    enqueue_s = time.perf_counter() - t0
    made: list[str] = []
    lock = threading.Lock()

    def reviewer(name: str, seed: int) -> None:
        rng = random.Random(seed)
        while (item := store.claim_next(name)) is not None:
            if rng.random() < 0.8:
                store.approve(item.case_id, name, item.version)
            else:
                store.reject(item.case_id, name, item.version, reason="bench")
            with lock:
                made.append(item.case_id)

    threads = [threading.Thread(target=reviewer, args=(f"r{i}", i)) for i in range(reviewers)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    decide_s = time.perf_counter() - t0
    engine.dispose()
    ok = len(made) == decisions and len(set(made)) == decisions
    return {"enqueue_s": enqueue_s, "decide_s": decide_s, "ok": ok, "n": len(made), "made": made}


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--reviewers", type=int, default=10)
    parser.add_argument("--decisions", type=int, default=1000)
    parser.add_argument("--pg", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        targets = [("sqlite", f"sqlite:///{Path(tmp) / 'bench.db'}", None)]
        schema = f"review_bench_{uuid.uuid4().hex[:8]}"
        try:
            admin = create_engine(args.pg, connect_args={"connect_timeout": 3})
            with admin.begin() as conn:
                conn.execute(text(f'CREATE SCHEMA "{schema}"'))
            targets.append(("postgresql", f"{args.pg}?options=-csearch_path%3D{schema}", admin))
        except Exception as exc:  # noqa: BLE001
            print(f"postgresql: skipped ({type(exc).__name__}: no server at {args.pg})")
            figure("review postgresql: skipped, no server", None, "runs", "", False)
        for name, url, admin in targets:
            try:
                r = run(url, args.reviewers, args.decisions)
            finally:
                if admin is not None:
                    with admin.begin() as conn:
                        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
            print(
                f"{name:10s} reviewers={args.reviewers} decisions={r['n']} "
                f"enqueue={args.decisions / r['enqueue_s']:.0f} cases/s "
                f"decide={r['n'] / r['decide_s']:.0f} decisions/s "
                f"(claim+decide, {r['decide_s']:.2f} s) lost/duplicated: {'none' if r['ok'] else 'YES'}"
            )
            label = f"review {name}, {args.reviewers} reviewers x {args.decisions:,} decisions"
            figure(f"{label}: decision rate", round(r["n"] / r["decide_s"]), "—", "decisions/s")
            lost = args.decisions - len(set(r["made"])) + (len(r["made"]) - len(set(r["made"])))
            figure(f"{label}: lost/duplicated", lost, "= 0", "decisions", lost == 0)


if __name__ == "__main__":
    main()
