"""The durable record of a run: `RUN_DIR/trajectories.jsonl`, one `Trajectory` a line.

Each finished trajectory is appended, flushed and fsynced before the runner counts it as done,
so a run killed at any moment (Ctrl-C, `kill -9`, power loss after the fsync) keeps every
result it reported. On load, a torn last line (a record cut off mid-write) and any unreadable
line are skipped with a warning, and before the next append the file is cut back to its last
complete line, so a resumed run neither loses nor duplicates a record. Results are keyed by
(case id, trial, agent fingerprint); when a key occurs twice (a failed case re-run with
`rerun_failed`), the later record wins.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from pydantic import ValidationError

from casemill.evaluation.trajectory import Trajectory

log = logging.getLogger(__name__)

TRAJECTORIES_FILE = "trajectories.jsonl"

Key = tuple[str, int, str]


def key_of(trajectory: Trajectory) -> Key:
    return (trajectory.case_id, trajectory.trial, trajectory.agent_fingerprint)


class RunStore:
    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / TRAJECTORIES_FILE

    def load(self, fingerprint: str | None = None) -> dict[Key, Trajectory]:
        """Every readable trajectory (only `fingerprint`'s when given), the last one per key."""
        out: dict[Key, Trajectory] = {}
        if not self.path.exists():
            return out
        with open(self.path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                if not raw.endswith(b"\n"):
                    log.warning(
                        "%s:%d: torn last line (%d bytes) skipped; its case will run again",
                        self.path,
                        number,
                        len(raw),
                    )
                    continue
                try:
                    trajectory = Trajectory.model_validate_json(raw)
                except ValidationError as exc:
                    log.warning(
                        "%s:%d: unreadable trajectory skipped: %s",
                        self.path,
                        number,
                        exc.errors()[0]["msg"],
                    )
                    continue
                if fingerprint is None or trajectory.agent_fingerprint == fingerprint:
                    out[key_of(trajectory)] = trajectory
        return out

    def repair(self) -> int:
        """Cut a torn last line off the file; returns the bytes removed."""
        if not self.path.exists():
            return 0
        size = self.path.stat().st_size
        if size == 0:
            return 0
        with open(self.path, "rb+") as fh:
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return 0
            keep = _last_newline_end(fh, size)
            fh.truncate(keep)
            fh.flush()
            os.fsync(fh.fileno())
        log.warning("%s: removed a torn last line (%d bytes)", self.path, size - keep)
        return size - keep

    def append(self, trajectories: list[Trajectory]) -> None:
        """Append, flush and fsync; when this returns, the records survive a crash."""
        if not trajectories:
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        data = b"".join(stored(t) + b"\n" for t in trajectories)
        with open(self.path, "ab") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())


def stored(trajectory: Trajectory) -> bytes:
    """A trajectory as its line of trajectories.jsonl: with `state_changes`, the final state is
    left out (most of a line's bytes; `Trajectory.final` rebuilds it from the case's)."""
    if trajectory.state_changes is not None and trajectory.final_state is not None:
        return trajectory.model_dump_json(exclude={"final_state"}).encode("utf-8")
    return trajectory.model_dump_json().encode("utf-8")


def _last_newline_end(fh, size: int) -> int:
    """The offset just after the last b"\\n" in the file (0 when there is none)."""
    block = 1 << 16
    end = size
    while end > 0:
        start = max(0, end - block)
        fh.seek(start)
        chunk = fh.read(end - start)
        index = chunk.rfind(b"\n")
        if index >= 0:
            return start + index + 1
        end = start
    return 0
