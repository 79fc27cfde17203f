"""Loading: dotted field paths, folder expansion, and cases kept with their file and line."""

from __future__ import annotations

from fixtures.casebuild import good_cases, line

from casemill.validation import expand_paths, load_cases
from casemill.validation.loading import field_path


def test_field_path():
    assert field_path(("expected", "tool_calls", 0, "params", "order_id")) == (
        "expected.tool_calls[0].params.order_id"
    )
    assert field_path((0, "x")) == "[0].x"
    assert field_path(()) == ""


def test_expand_paths_sorted_recursive_and_filtered(tmp_path):
    (tmp_path / "b").mkdir()
    for name in ("b/z.jsonl", "a.jsonl.gz", "c.jsonl", "notes.json", "b/readme.md"):
        (tmp_path / name).write_bytes(b"")
    found = [p.relative_to(tmp_path).as_posix() for p in expand_paths([tmp_path])]
    assert found == ["a.jsonl.gz", "b/z.jsonl", "c.jsonl"]


def test_cases_keep_file_and_line(tmp_path):
    path = tmp_path / "good.jsonl"
    cases = good_cases()
    path.write_text("".join(line(c) for c in cases))
    result = load_cases([path])
    assert result.records == len(cases) and result.bad == []
    assert [(i.case.id, i.file, i.line) for i in result.cases] == [
        (c.id, str(path), n) for n, c in enumerate(cases, 1)
    ]


def test_a_file_named_twice_is_read_once(tmp_path):
    (tmp_path / "seeds").mkdir()
    path = tmp_path / "seeds" / "good.jsonl"
    path.write_text("".join(line(c) for c in good_cases()))
    again = tmp_path / "seeds" / ".." / "seeds" / "good.jsonl"
    assert expand_paths([tmp_path / "seeds", path, again]) == [path]
    loaded = load_cases([tmp_path / "seeds", path])
    assert loaded.bad == [] and len(loaded.cases) == len(good_cases())


def test_a_folder_walk_leaves_out_rejects_and_quarantine_files(tmp_path):
    # what expand and validate write beside their outputs holds bad records, not cases: read as
    # cases they made 'casemill validate cases/' report every reject as a broken case
    names = ("c.jsonl", "c.rejects.jsonl", "s.quarantine.jsonl", "t.quarantine.jsonl.gz")
    for name in names:
        (tmp_path / name).write_bytes(b"")
    assert [p.name for p in expand_paths([tmp_path])] == ["c.jsonl"]
    named = tmp_path / "c.rejects.jsonl"
    assert expand_paths([named]) == [named]  # a file named as such is read
