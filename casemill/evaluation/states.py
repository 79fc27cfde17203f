"""A run's final state as what changed: a trajectory keeps the entities the agent changed, not
the whole state again (most of a run folder's bytes, for a state the case already holds).

`state_delta(initial, final)` compares the two comparable states a level down: for a top-level
member that is an object in both (`orders`, `customers`, ...), the entries added or changed
(`set`) and removed (`removed`); any other member changed whole (`values`) or dropped
(`dropped`). `apply_delta(initial, delta)` gives `final` back, equal as JSON.

    >>> initial = {"orders": {"W1": {"status": "pending"}, "W2": {"status": "delivered"}}}
    >>> final = {"orders": {"W1": {"status": "cancelled"}, "W2": {"status": "delivered"}}}
    >>> delta = state_delta(initial, final)
    >>> delta
    {'set': {'orders': {'W1': {'status': 'cancelled'}}}}
    >>> apply_delta(initial, delta) == final
    True
"""

from __future__ import annotations

from typing import Any


def state_delta(initial: dict[str, Any], final: dict[str, Any]) -> dict[str, Any]:
    """What turns `initial` into `final` (see the module docstring); {} when they are equal."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in final.items():
        before = initial.get(key, _MISSING)
        if _same(before, value):
            continue
        if isinstance(before, dict) and isinstance(value, dict):
            changed = {k: v for k, v in value.items() if not _same(before.get(k, _MISSING), v)}
            gone = [k for k in before if k not in value]
            if changed:
                out.setdefault("set", {})[key] = changed
            if gone:
                out.setdefault("removed", {})[key] = gone
        else:
            out.setdefault("values", {})[key] = value
    dropped = [k for k in initial if k not in final]
    if dropped:
        out["dropped"] = dropped
    return out


def apply_delta(initial: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """`initial` with `delta` applied: the final state it was made from."""
    out = dict(initial)
    for key, changed in delta.get("set", {}).items():
        out[key] = {**out.get(key, {}), **changed}
    for key, gone in delta.get("removed", {}).items():
        out[key] = {k: v for k, v in out[key].items() if k not in set(gone)}
    out.update(delta.get("values", {}))
    for key in delta.get("dropped", ()):
        out.pop(key, None)
    return out


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: `1`, `1.0` and `true` are three values (Python's `==` makes them one)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


class _Missing:
    def __eq__(self, other: object) -> bool:
        return other is self

    def __hash__(self) -> int:
        return 0


_MISSING = _Missing()
