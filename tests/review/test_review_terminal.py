"""Terminal review: the key loop with injected input, and `casemill review next` driven in a real
pseudo-terminal (approve with 'a', edit through $EDITOR, quit with 'q')."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from review_factory import GUESS_NOTE, child_case, guessed_case
from rich.console import Console

from casemill.review.items import ItemFilter
from casemill.review.terminal import Tally, TerminalIO, _undo_last, run


def scripted(keys: str, answers: list[str], edits: list) -> TerminalIO:
    key_iter = iter(keys)
    ans_iter = iter(answers)
    edit_iter = iter(edits)
    return TerminalIO(
        read_key=lambda: next(key_iter, "q"),
        ask=lambda _q: next(ans_iter),
        edit_text=lambda text, _s: next(edit_iter)(text),
    )


def test_key_loop_approve_reject_skip_edit(sqlite_store, parent, children):
    store = sqlite_store
    store.enqueue(children[:4], "b1", parents={parent.id: parent})

    def bad_edit(text: str) -> str:
        return text.replace('"outcome": "resolve"', '"outcome": "whatever"')

    def good_edit(text: str) -> str:
        # the editor reopens on the refused text, so the fix starts from it
        fixed = text.replace('"outcome": "whatever"', '"outcome": "resolve"')
        return fixed.replace('"optimal_steps": 3', '"optimal_steps": 4')

    console = Console(record=True, width=120)
    # case 0: a; case 1: r + reason; case 2: s; case 3: e (bad) -> e again (good) -> a
    io = scripted("arse" + "e" + "a", ["label is wrong"], [bad_edit, good_edit])
    tally = run(store, "ana", ItemFilter(batch_id="b1"), console, io)
    out = console.export_text()
    assert tally.approved == [children[0].id, children[3].id]
    assert tally.rejected == [children[1].id] and tally.skipped == [children[2].id]
    assert tally.edited == [children[3].id]
    assert "edit refused, the original is kept" in out and "outcome" in out
    assert store.get(children[1].id).reason == "label is wrong"
    edited = store.get(children[3].id)
    assert edited.case.expected.optimal_steps == 4 and edited.status == "approved"
    assert (
        store.get(children[2].id).status == "pending"
        and store.get(children[2].id).lease_holder is None
    )
    assert "changes vs parent" in out and "crackd" in out


def test_markup_in_case_text_is_shown_literally(sqlite_store, parent):
    case = child_case(parent, 1, text="[bold red]refund[/] W1001 mug cracked <script>x</script>")
    sqlite_store.enqueue([case], "b1", parents={parent.id: parent})
    console = Console(record=True, width=120)
    run(sqlite_store, "ana", None, console, scripted("q", [], []))
    assert "[bold red]refund[/] W1001 mug cracked <script>x</script>" in console.export_text()


def _read_until(fd: int, needle: bytes, timeout: float = 60.0) -> bytes:
    buf = b""
    deadline = time.monotonic() + timeout
    while needle not in buf:
        if time.monotonic() > deadline:
            raise AssertionError(f"did not see {needle!r}; got: {buf[-2000:]!r}")
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    return buf


@pytest.mark.slow
def test_review_next_in_a_real_pty(tmp_path: Path, parent, children):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    from casemill.review.store import ReviewStore

    store = ReviewStore.open(db)
    store.enqueue(children[:2], "b1", parents={parent.id: parent})
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('\"optimal_steps\": 3', '\"optimal_steps\": 5'))\n"
    )
    env = {**os.environ, "EDITOR": f"{sys.executable} {editor}", "COLUMNS": "120", "TERM": "xterm"}
    exe = Path(sys.executable).parent / "casemill"
    main_fd, child_fd = pty.openpty()
    proc = subprocess.Popen(
        [str(exe), "review", "next", "--db", db, "--reviewer", "tty-ana"],
        stdin=child_fd,
        stdout=child_fd,
        stderr=child_fd,
        env=env,
        close_fds=True,
    )
    os.close(child_fd)
    try:
        _read_until(main_fd, b"[q]uit")
        os.write(main_fd, b"a")
        _read_until(main_fd, b"approved " + children[0].id.encode())
        _read_until(main_fd, b"[q]uit")
        os.write(main_fd, b"e")
        _read_until(main_fd, b"edit saved and validated")
        _read_until(main_fd, b"[q]uit")
        os.write(main_fd, b"q")
        out = _read_until(main_fd, b"session:")
        assert b"1 approved" in out and b"1 edited" in out
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main_fd)
    assert store.get(children[0].id).reviewer == "tty-ana"
    second = store.get(children[1].id)
    assert second.case.expected.optimal_steps == 5 and second.status == "pending"
    assert store.count(ItemFilter(status="approved")) == 1


def test_unknown_key_shows_the_keys_and_undo_shows_the_undone_case_next(
    sqlite_store, parent, children
):
    store = sqlite_store
    store.enqueue(children[:3], "b1", parents={parent.id: parent})
    console = Console(record=True, width=120)
    # case 0: x (unknown key), a; case 1 on screen: u (undo case 0) -> case 0 again: r + reason
    io = scripted("xaur", ["wrong label"], [])
    tally = run(store, "ana", ItemFilter(batch_id="b1"), console, io)
    out = console.export_text()
    assert "[a]pprove  [r]eject  [e]dit  [s]kip  [u]ndo last  [q]uit\n" in out
    assert "pprove  eject  dit" not in out.replace("[a]pprove  [r]eject  [e]dit", "")
    assert f"undone: {children[0].id} is pending again" in out
    assert tally.rejected == [children[0].id] and tally.approved == []
    assert store.get(children[0].id).status == "rejected"
    assert store.get(children[1].id).status == "pending"
    assert store.get(children[1].id).lease_holder is None


def test_undo_takes_back_the_last_decision_whichever_it_was(sqlite_store, parent, children):
    store = sqlite_store
    store.enqueue(children[:4], "b1", parents={parent.id: parent})
    console = Console(record=True, width=120)
    # case 0: a; case 1: r + reason; case 2: a; then u takes back case 2's approval, and
    # case 2 on screen again is skipped
    io = scripted("araus", ["wrong label"], [])
    tally = run(store, "ana", ItemFilter(batch_id="b1"), console, io)
    assert f"undone: {children[2].id} is pending again" in console.export_text()
    assert store.get(children[2].id).status == "pending"
    assert store.get(children[1].id).status == "rejected"
    assert store.get(children[0].id).status == "approved"
    assert tally.approved == [children[0].id] and tally.rejected == [children[1].id]
    assert tally.decided == [children[0].id, children[1].id]


def test_undo_claims_the_undone_case_even_when_the_current_lease_is_lost(
    sqlite_store, parent, children
):
    store = sqlite_store
    store.enqueue(children[:2], "b1", parents={parent.id: parent})
    store.approve(children[0].id, "ana", None)
    current = store.claim(children[1].id, "bob")  # ana's lease on the case on screen is gone
    tally = Tally(approved=[children[0].id], decided=[children[0].id])
    console = Console(record=True, width=120)
    assert _undo_last(store, current, "ana", tally, console) == "next"
    assert store.get(children[0].id).status == "pending"
    assert store.get(children[0].id).lease_holder == "ana"
    assert store.get(children[1].id).lease_holder == "bob"
    assert tally.approved == []


def test_a_low_confidence_label_is_flagged_with_why(sqlite_store):
    guess = guessed_case(1)
    sqlite_store.enqueue([guess], "b1")
    console = Console(record=True, width=200)
    run(sqlite_store, "ana", None, console, scripted("q", [], []))
    out = console.export_text()
    assert "NEEDS LABEL" in out and "no parent" not in out
    assert f"low-confidence label, check the expected behaviour yourself: {GUESS_NOTE}" in out


def test_an_edited_case_shows_its_new_id_next_to_its_queue_key(sqlite_store, parent, children):
    store = sqlite_store
    store.enqueue(children[:1], "b1", parents={parent.id: parent})

    def edit(text: str) -> str:
        return text.replace('"optimal_steps": 3', '"optimal_steps": 4')

    console = Console(record=True, width=160)
    run(store, "ana", None, console, scripted("eq", [], [edit]))
    new_id = store.get(children[0].id).case.id
    assert new_id != children[0].id
    assert f"{children[0].id} -> {new_id}  v" in console.export_text()


def test_a_case_taken_over_after_the_lease_lapsed_does_not_trap_the_reviewer(
    tmp_path, parent, children
):
    """Ana leaves a case on screen past her lease; Bob takes it. Her keys were all refused (a
    and r: the case changed, bob holds it; s and q: she holds no lease): only Ctrl-C got her
    out."""
    from datetime import UTC, datetime, timedelta

    from casemill.review.schema import make_engine
    from casemill.review.store import ReviewStore

    moment = [datetime(2026, 1, 1, tzinfo=UTC)]
    engine = make_engine(f"sqlite:///{tmp_path / 'q.db'}")
    store = ReviewStore(engine, clock=lambda: moment[0], lease_s=60)
    store.enqueue(children[:2], "b1", parents={parent.id: parent})
    keys = iter("aq")
    pressed = []

    def read_key() -> str:
        if len(pressed) == 0:  # a long lunch: the lease lapses and bob takes the case
            moment[0] += timedelta(minutes=5)
            store.claim(children[0].id, "bob")
        pressed.append(1)
        if len(pressed) > 6:
            raise AssertionError("the reviewer is stuck on a case another reviewer holds")
        return next(keys, "q")

    io = TerminalIO(read_key=read_key, ask=lambda _q: "", edit_text=lambda t, _s: t)
    console = Console(record=True, width=120)
    tally = run(store, "ana", ItemFilter(batch_id="b1"), console, io)
    out = console.export_text()
    assert f"refused: case {children[0].id} changed since you loaded it" in out
    assert f"{children[0].id} is now bob's: moving on" in out
    assert tally.approved == [] and store.get(children[0].id).lease_holder == "bob"
    assert store.get(children[1].id).lease_holder is None  # q on the next case let go of it
    engine.dispose()


def test_a_wrong_key_or_a_missing_reason_does_not_show_the_case_again(
    sqlite_store, parent, children
):
    sqlite_store.enqueue(children[:2], "b1", parents={parent.id: parent})
    console = Console(record=True, width=120)
    # case 0: x, z (no such keys), r with an empty reason, a; case 1: q
    io = scripted("xzraq", [" "], [])
    tally = run(sqlite_store, "ana", ItemFilter(batch_id="b1"), console, io)
    out = console.export_text()
    assert tally.approved == [children[0].id]
    assert out.count(" conversation ") == 2  # each case drawn once
    assert "'x' is not a key here" in out and "'z' is not a key here" in out
    assert "a reject needs a reason; nothing changed" in out
    assert out.count("[a]pprove  [r]eject  [e]dit  [s]kip  [u]ndo last  [q]uit") == 5


def test_on_a_terminal_each_case_replaces_the_last_and_diffs_carry_signs(
    sqlite_store, parent, children
):
    import io as text_io

    store = sqlite_store
    store.enqueue(children[:2], "b7", parents={parent.id: parent})
    screen = text_io.StringIO()
    console = Console(file=screen, force_terminal=True, color_system=None, width=120)
    run(store, "ana", ItemFilter(batch_id="b7"), console, scripted("aq", [], []))
    out = screen.getvalue()
    assert out.count("\x1b[2J") == 2  # the screen cleared before each case
    assert f"last: approved {children[0].id}" in out
    assert "[-" in out and "-]" in out and "{+" in out and "+}" in out  # no colour: signs
