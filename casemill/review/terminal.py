"""Terminal review (`casemill review next`): one case at a time, rendered with Rich, decided with
single keys: a approve, r reject (asks a reason), e edit (opens $EDITOR on the case JSON, then
re-validates), s skip, u undo the last decision, q quit.

This is the CLI edge, so it prints with Rich. Keys, questions and the editor come through
`TerminalIO`, so the loop is tested with injected input as well as in a real pseudo-terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from casemill.review.errors import EditRefused, ReviewError
from casemill.review.items import Item, ItemFilter
from casemill.review.present import ItemView, item_view
from casemill.review.schema import now_iso
from casemill.review.store import ReviewStore

KEYS_HELP = "[a]pprove  [r]eject  [e]dit  [s]kip  [u]ndo last  [q]uit"
ROLE_STYLE = {"customer": "bold cyan", "assistant": "green", "tool": "magenta", "system": "dim"}


@dataclass
class TerminalIO:
    read_key: Callable[[], str]
    ask: Callable[[str], str]
    edit_text: Callable[[str, str], str]  # (text, file suffix) -> edited text


@dataclass
class Tally:
    approved: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    decided: list[str] = field(default_factory=list)  # approved and rejected, in order

    def decide(self, bucket: list[str], case_id: str) -> None:
        bucket.append(case_id)
        self.decided.append(case_id)

    def take_back(self, case_id: str) -> None:
        for bucket in (self.approved, self.rejected, self.decided):
            if case_id in bucket:
                bucket.remove(case_id)


class TtyKeys:
    """Single keys from a terminal: cbreak mode (no echo, no Enter) for the whole session, the
    normal mode back while a question is asked or the editor runs. Without a tty, each line's
    first character is a key."""

    def __init__(self, console: Console):
        self.console = console
        self.fd = sys.stdin.fileno()
        self.tty = sys.stdin.isatty()
        self._saved = None

    def __enter__(self) -> TtyKeys:
        if self.tty:
            import termios
            import tty

            self._saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)
        return self

    def __exit__(self, *exc: object) -> None:
        self._restore()

    def _restore(self) -> None:
        if self._saved is not None:
            import termios

            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)

    @contextlib.contextmanager
    def cooked(self) -> Iterator[None]:
        self._restore()
        try:
            yield
        finally:
            if self._saved is not None:
                import tty

                tty.setcbreak(self.fd)

    def read_key(self) -> str:
        if not self.tty:
            line = sys.stdin.readline()
            return line[:1] if line else "q"
        data = os.read(self.fd, 1)
        return data.decode("utf-8", "replace") if data else "q"

    def ask(self, question: str) -> str:
        with self.cooked():
            return self.console.input(question)

    def edit_text(self, text: str, suffix: str) -> str:
        with self.cooked():
            return edit_in_editor(text, suffix)

    def io(self) -> TerminalIO:
        return TerminalIO(read_key=self.read_key, ask=self.ask, edit_text=self.edit_text)


def edit_in_editor(text: str, suffix: str = ".json") -> str:
    """Open `$VISUAL`/`$EDITOR` (default vi) on `text` in a temporary file; the edited text."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory(prefix="casemill-review-") as tmp:
        path = Path(tmp) / f"case{suffix}"
        path.write_text(text, encoding="utf-8")
        subprocess.run([*shlex.split(editor), str(path)], check=False)
        return path.read_text(encoding="utf-8")


def render(view: ItemView, console: Console, position: str = "") -> None:
    item = view.item
    flags = "  ".join(f"[reverse]{f}[/]" for f in view.flags)
    # an edit gives the case a new content id; the queue keeps the item under the old one
    ids = f"{item.case_id} -> {item.case.id}" if item.case.id != item.case_id else item.case_id
    head = Text.assemble((view.headline, "bold"), f"\n{ids}  v{item.version}  {position}  ")
    parts = [head, Text.from_markup(flags)] if flags else [head]
    if view.label_note:
        parts.append(Text(view.label_note, style="bold yellow"))  # Text: no markup in notes
    console.print(Panel(Group(*parts), title="case", expand=True))
    if item.parent is not None:
        console.print(_changes_table(view))
    convo = Table.grid(padding=(0, 1))
    for turn in item.case.conversation:
        body = Text(turn.content)  # Text never interprets markup in case content
        for call in turn.tool_calls:
            body.append(
                f"\n  -> {call.tool}({json.dumps(call.params, ensure_ascii=False)})", style="green"
            )
        convo.add_row(Text(turn.role, style=ROLE_STYLE.get(turn.role, "")), body)
    console.print(Panel(convo, title="conversation"))
    env = Text("\n".join(view.environment) or "(empty)")
    console.print(Panel(env, title="environment"))
    expected = Table.grid(padding=(0, 1))
    for tool, params in view.expected_calls:
        expected.add_row(Text("call", style="bold"), Text(f"{tool} {params}"))
    for key, value in view.expectations:
        expected.add_row(Text(key, style="dim"), Text(value))
    console.print(Panel(expected, title="expected"))
    if view.findings:
        console.print(Panel(Text("\n".join(view.findings), style="red"), title="validation"))
    else:
        console.print(Text("validation: every check passed", style="green"))


def _changes_table(view: ItemView) -> Panel:
    if not view.changes:
        return Panel(Text("same content as the parent", style="dim"), title="changes vs parent")
    table = Table.grid(padding=(0, 1))
    for change in view.changes[:12]:
        line = Text()
        if change.words:
            for op, piece in change.words:
                line.append(*_marked(op, piece))
        else:
            if change.before:
                line.append(*_marked("-", change.before))
                line.append(" ")
            line.append(*_marked("+", change.after))
        table.add_row(Text(change.path, style="bold red" if change.label_change else "bold"), line)
    more = len(view.changes) - 12
    if more > 0:
        table.add_row(Text("…"), Text(f"{more} more changes"))
    return Panel(table, title="changes vs parent")


def _marked(op: str, piece: str) -> tuple[str, str]:
    """A piece of a diff with its signs as well as its colour, git's word-diff way: `[-gone-]`,
    `{+new+}` (readable without colour, on a terminal that shows none or to a reader who sees
    none)."""
    if op == "-":
        return f"[-{piece}-]", "red strike"
    if op == "+":
        return f"{{+{piece}+}}", "green bold"
    return piece, ""


def _edit(
    store: ReviewStore, item: Item, reviewer: str, io: TerminalIO, console: Console
) -> Item | None:
    text = json.dumps(
        item.case.model_dump(mode="json", exclude={"review"}), indent=2, ensure_ascii=False
    )
    while True:
        edited = io.edit_text(text, ".json")
        if edited.strip() == text.strip():
            console.print("no change; the case is kept as it was")
            return None
        try:
            return store.edit(item.case_id, reviewer, item.version, edited)
        except EditRefused as exc:
            console.print(Text("edit refused, the original is kept:", style="bold red"))
            for finding in exc.findings:
                console.print(Text(f"  {finding}", style="red"))
            console.print("press e to edit again, any other key to keep the original")
            if io.read_key() != "e":
                return None
            text = edited


def handle_key(
    store: ReviewStore,
    item: Item,
    key: str,
    reviewer: str,
    io: TerminalIO,
    console: Console,
    tally: Tally,
) -> str:
    """Act on one key for `item`. Returns 'next', 'same' (show the item again) or 'quit'."""
    try:
        if key == "a":
            store.approve(item.case_id, reviewer, item.version)
            tally.decide(tally.approved, item.case_id)
            console.print(Text(f"approved {item.case_id}", style="green"))
            return "next"
        if key == "r":
            reason = io.ask("reason for rejecting: ").strip()
            if not reason:
                console.print("a reject needs a reason; nothing changed")
                return "same"
            store.reject(item.case_id, reviewer, item.version, reason)
            tally.decide(tally.rejected, item.case_id)
            console.print(Text(f"rejected {item.case_id}", style="red"))
            return "next"
        if key == "e":
            if _edit(store, item, reviewer, io, console) is not None:
                tally.edited.append(item.case_id)
                console.print(
                    Text("edit saved and validated; now approve or reject it", style="green")
                )
            return "same"
        if key == "s":
            _let_go(store, item, reviewer)
            tally.skipped.append(item.case_id)
            return "next"
        if key == "q":
            _let_go(store, item, reviewer)
            return "quit"
    except ReviewError as exc:
        console.print(Text(f"refused: {exc}", style="bold red"))
        return "same"
    if key == "u":
        return _undo_last(store, item, reviewer, tally, console)
    console.print(Text(f"{key!r} is not a key here"))  # the keys are shown next
    return "same"


def _let_go(store: ReviewStore, item: Item, reviewer: str) -> None:
    """Give the lease on `item` back; one that lapsed and went to someone else is not ours to
    give, and must not keep the reviewer from skipping or quitting."""
    with contextlib.suppress(ReviewError):
        store.release(item.case_id, reviewer)


def _held_by_other(store: ReviewStore, item: Item, reviewer: str) -> str | None:
    """Who holds `item` now, when it is someone else whose lease is running."""
    holder = item.lease_holder
    if holder and holder != reviewer and (item.lease_expires or "") > now_iso(store.clock):
        return holder
    return None


def _undo_last(
    store: ReviewStore, current: Item, reviewer: str, tally: Tally, console: Console
) -> str:
    """Undo this session's last decision and show that case next: it is leased to `reviewer`
    and the lease on `current`, the case on screen, is given back."""
    if not tally.decided:
        console.print("no decision of this session to undo")
        return "same"
    case_id = tally.decided[-1]
    try:
        store.undo(case_id, reviewer, None)
    except ReviewError as exc:
        console.print(Text(f"refused: {exc}", style="bold red"))
        return "same"
    # each on its own: a lease on `current` lost to someone else must not stop the claim
    with contextlib.suppress(ReviewError):  # a lapsed lease taken by another: nothing to give
        store.release(current.case_id, reviewer)
    with contextlib.suppress(ReviewError):  # the undone case claimed by another: shown later
        store.claim(case_id, reviewer)
    tally.take_back(case_id)
    console.print(f"undone: {case_id} is pending again")
    return "next"


def _redraw(console: Console, tally: Tally) -> None:
    """On a terminal, a new case replaces the last one on screen (the session's tally and the
    last decision stay at the top) instead of being printed below it."""
    if not console.is_terminal:
        return
    console.clear()
    last = "no decision yet"
    if tally.decided:
        case_id = tally.decided[-1]
        last = f"{'approved' if case_id in tally.approved else 'rejected'} {case_id}"
    console.print(
        Text(
            f"session: {len(tally.approved)} approved, {len(tally.rejected)} rejected, "
            f"{len(tally.skipped)} skipped; last: {last}",
            style="dim",
        )
    )


def run(
    store: ReviewStore,
    reviewer: str,
    flt: ItemFilter | None,
    console: Console,
    io: TerminalIO,
    limit: int | None = None,
) -> Tally:
    """Review pending items of `flt` until none is left, `limit` decisions are made, or q."""
    tally = Tally()
    skipped: set[str] = set()
    while limit is None or len(tally.approved) + len(tally.rejected) < limit:
        item = store.claim_next(reviewer, flt, skip=skipped)
        if item is None:
            console.print("nothing left to review for this filter")
            break
        left = store.count(ItemFilter(**{**(flt or ItemFilter()).__dict__, "status": "pending"}))
        action, shown = "same", None
        while action == "same":
            if shown != item.version:  # a wrong key or a refused write leaves the case as shown
                _redraw(console, tally)
                render(item_view(item), console, position=f"{left} pending")
                shown = item.version
            console.print(Text(KEYS_HELP, style="bold"))
            action = handle_key(store, item, io.read_key(), reviewer, io, console, tally)
            if action == "same":
                item = store.get(item.case_id)
                if item.status != "pending":
                    break
                holder = _held_by_other(store, item, reviewer)
                if holder:  # our lease lapsed and they took the case: show the next one
                    console.print(Text(f"{item.case_id} is now {holder}'s: moving on"))
                    skipped.add(item.case_id)
                    action = "next"
        if action == "quit":
            break
        if tally.skipped and tally.skipped[-1] == item.case_id:
            skipped.add(item.case_id)
    console.print(
        f"session: {len(tally.approved)} approved, {len(tally.rejected)} rejected, "
        f"{len(tally.edited)} edited, {len(tally.skipped)} skipped"
    )
    return tally
