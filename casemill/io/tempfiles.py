"""Temporary files beside a target, and the stale ones a killed writer left behind.

A file written atomically (`casemill.io.jsonl.atomic_write_text`, mining's outputs) is first
written to a hidden temporary file in the target's folder and renamed over the target at the
end. A writer killed in between (`kill -9`, a lost machine) leaves that file behind, often
megabytes, and nothing else would ever remove it. So the temporary file names its writer,
`.<target>.<pid>-<machine>.<random>.tmp`, and each writer of a target first removes the stale
temporary files of that target, and of that target only:

- one whose writer ran on this machine (same host name and process namespace) and is no longer
  alive: removed at once;
- any other (a writer on another machine sharing the folder, a writer whose pid has since been
  reused, or a file named before writers were named, `.<target>.<random>.tmp`): removed once
  it has not been written for `STALE_AFTER_HOURS`.

A live writer's file is never taken away while it writes; one left unwritten for that long by a
writer still alive loses it, and that writer's rename then fails loudly instead of writing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import socket
import tempfile
import time
from pathlib import Path

log = logging.getLogger(__name__)

STALE_AFTER_HOURS = 24
_RANDOM = "[a-z0-9_]{8}"  # what `tempfile.mkstemp` puts in a name


def _machine_tag() -> str:
    """Eight hex digits naming this machine and process namespace: a pid is only known alive
    or dead where it was given (another host, or another container, has other processes)."""
    try:
        namespace = str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        namespace = ""
    seed = f"{socket.gethostname()}/{namespace}"
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()[:8]


MACHINE = _machine_tag()


def _pattern(target: Path) -> re.Pattern[str]:
    """The names of the temporary files of `target`: named by their writer, or not (older)."""
    name = re.escape(target.name)
    return re.compile(rf"\.{name}\.(?:(\d+)-([0-9a-f]{{8}})\.)?{_RANDOM}\.tmp")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _is_stale(match: re.Match[str], mtime: float, now: float) -> bool:
    pid, machine = match.group(1), match.group(2)
    if pid is not None and machine == MACHINE and not _alive(int(pid)):
        return True
    return now - mtime > STALE_AFTER_HOURS * 3600


def remove_stale_temps(target: str | Path, now: float | None = None) -> list[Path]:
    """Remove the stale temporary files of `target` (see the module's docstring); returns
    them. A file another writer removes first, or one that cannot be removed, is let be."""
    target = Path(target)
    now = time.time() if now is None else now
    pattern = _pattern(target)
    prefix = f".{target.name}."
    removed = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return []
    for entry in entries:
        match = pattern.fullmatch(entry.name) if entry.name.startswith(prefix) else None
        if match is None:
            continue
        try:
            if entry.is_file(follow_symlinks=False) and _is_stale(
                match, entry.stat(follow_symlinks=False).st_mtime, now
            ):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    if removed:
        log.info("removed %d stale temporary file(s) of %s", len(removed), target)
    return removed


def temp_beside(target: str | Path) -> tuple[int, Path]:
    """A new temporary file for `target`, in its folder and named by this writer, after the
    stale ones of `target` are removed: its open descriptor and its path (mode 0600)."""
    target = Path(target)
    remove_stale_temps(target)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{target.name}.{os.getpid()}-{MACHINE}.", suffix=".tmp", dir=target.parent
    )
    return fd, Path(tmp)
