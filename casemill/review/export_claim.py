"""An export's claim on the items it writes to the corpus, and how a later export reads one.

A `review export` claims its items (one transaction) before it writes the corpus, and marks them
exported (one transaction) after. The claim is the export's journal: it names the run, the
machine and the process, and it never lapses on its own, so while it stands nobody can undo,
reject or edit a case the corpus may already hold. An export that died leaves its claim behind;
`casemill review export --take-over` takes it over and rolls the job forward: the cases the
corpus already holds are marked exported, the others are written.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from casemill.review.errors import DecisionBlocked

# an export's claim is a lease held by "export:<run>@<host>:<pid>" (a reviewer's name may not
# start so); claims of older versions are "export:<run>" alone
EXPORT_HOLDER = "export:"
TAKE_OVER = "casemill review export --take-over"
_HOST_MAX = 60


def new_holder() -> str:
    """The claim name of a new export run: a run id, this machine and this process."""
    host = socket.gethostname()[:_HOST_MAX]
    return f"{EXPORT_HOLDER}{uuid.uuid4().hex[:12]}@{host}:{os.getpid()}"


def export_holder(m: Mapping[str, Any]) -> str | None:
    """The export holding the item's row, or None when no export does."""
    holder = m["lease_holder"] or ""
    return holder if holder.startswith(EXPORT_HOLDER) else None


@dataclass(frozen=True)
class ExportClaim:
    """Who holds a claim: the export run, its machine and process (None for an older claim
    that does not say), who ran it and when it claimed (from the audit log)."""

    holder: str
    run: str
    host: str | None
    pid: int | None
    by: str | None
    since: str | None

    @classmethod
    def parse(cls, holder: str, by: str | None = None, since: str | None = None) -> ExportClaim:
        rest = holder[len(EXPORT_HOLDER) :]
        run, _, where = rest.partition("@")
        host, _, pid = where.rpartition(":")
        if not (host and pid.isdigit()):
            return cls(holder, run, None, None, by, since)
        return cls(holder, run, host, int(pid), by, since)

    def running(self) -> bool | None:
        """Whether the claiming process still runs: known on its own machine only (None
        elsewhere, or for a claim that does not name its process)."""
        if self.pid is None or self.host != socket.gethostname()[:_HOST_MAX]:
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # a process of another user: it exists
            return True
        return True

    def describe(self, now: datetime) -> str:
        """The claim in words: run, who, where, since when and how long ago."""
        parts = [f"export {self.run}"]
        if self.by:
            parts.append(f"run by {self.by}")
        if self.host is not None:
            parts.append(f"on {self.host}, pid {self.pid}")
        if self.since:
            age = now - datetime.fromisoformat(self.since)
            minutes = max(int(age.total_seconds() // 60), 0)
            parts.append(f"claimed at {self.since[:16].replace('T', ' ')} UTC, {minutes} min ago")
        return ", ".join(parts)


def refuse_held(claim: ExportClaim, case_id: str, batch_id: str, now: datetime) -> DecisionBlocked:
    """Why an export cannot claim a case another export holds, and the command to take over."""
    return DecisionBlocked(
        f"case {case_id} of batch {batch_id} is being exported by another export "
        f"({claim.describe(now)}); if that export died, finish its work with `{TAKE_OVER}` "
        "(cases the corpus already holds are marked exported, the others written)"
    )


def refuse_take_over(claim: ExportClaim, now: datetime) -> DecisionBlocked | None:
    """A take-over of a claim whose process still runs on this machine is refused: that export
    is alive and would finish its own job."""
    if claim.running():
        return DecisionBlocked(
            f"cannot take over the claim of {claim.describe(now)}: that process is still "
            "running; wait for it to finish (or stop it) and run the export again"
        )
    return None
