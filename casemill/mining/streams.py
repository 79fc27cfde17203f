"""Mining the files of a stream one at a time: logs whose traces or conversations go on from one
file into the next (OTel span exports, logs of model calls: a rotated file splits them;
`casemill.mining.parsers.spans_files` tells them).

`mine` reads the files of a run as one stream. A flow that mines a task a file (`mine-logs`)
mines such files with `mine_part`, one after the other, each going on from the `StreamState`
the one before left (the traces or conversations still open), then `mine_end` for what is still
open after the last; merged (`merge_results`), the parts are the cases `mine` gives for all the
files at once, in the same order. A part depends only on the files up to its own, so a flow
caches it on them, and a new file of the log mines only itself and what went on into it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casemill.mining.parsers import carried
from casemill.mining.pipeline import MineOptions, MineResult, collect


@dataclass
class StreamState:
    """What the files of a stream carry from one to the next: the parser's state across files
    (`casemill.mining.parsers.carried`), holding the OTel traces, or the conversations of model calls,
    still open at the end of the files read so far. `ended` once the last file was read: what
    was still open is mined then."""

    fmt: str
    carried: dict[str, Any] = field(default_factory=dict)
    ended: bool = False


def mine_part(
    path: Path,
    fmt: str,
    stream: StreamState | None = None,
    *,
    options: MineOptions | None = None,
) -> tuple[MineResult, StreamState]:
    """One file of a stream, going on from the files before it (`stream`, as the part before
    gave it; None for the first): the candidates of the traces or conversations that ended in
    it, and the state to go on from in the next file (`stream` is left as it is, so a part can
    be mined again)."""
    state = StreamState(fmt, carried(fmt)) if stream is None else copy.deepcopy(stream)
    if state.fmt != fmt or state.ended:
        ended = "an ended" if state.ended else "a"
        raise ValueError(f"a {fmt} file cannot go on from {ended} {state.fmt} stream")
    return collect([Path(path)], fmt, options or MineOptions(), (), state), state


def mine_end(stream: StreamState, *, options: MineOptions | None = None) -> MineResult:
    """What a stream holds open after its last file, mined."""
    state = copy.deepcopy(stream)
    state.ended = True
    return collect([], state.fmt, options or MineOptions(), (), state)
