"""Canonical JSON and content ids.

The id of a case is `c_` + the first 20 hex digits of the SHA-256 of the canonical JSON of what the
case means (domain, environment, conversation, user scenario, expected). Canonical JSON: keys
sorted, no insignificant white space, UTF-8, and empty values (None, "", [], {}) dropped
recursively, so that adding an optional field to the model later does not change any id.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import orjson

ID_PREFIX = "c_"
ID_HEX_DIGITS = 20


_LIMIT = 2**53  # integral floats below this are written as ints
_NON_FINITE = "Out of range float values are not JSON compliant"


def _keep(value: Any) -> bool:
    return value is not None and not (isinstance(value, str | list | dict) and not value)


def _float(value: float) -> float | int:
    if value.is_integer():
        return int(value) if abs(value) < _LIMIT else value
    if value != value or value in (math.inf, -math.inf):
        raise ValueError(f"{_NON_FINITE}: {value!r}")
    return value


# Exact-type fast paths for the common values of plain JSON (str, int, bool, float, dict,
# list); anything else (subclasses, tuples) takes the general path in `_prune`, so the result is
# the same for any input. A non-empty list stays non-empty (elements are never dropped).
def _prune_dict(value: dict) -> dict:
    out = {}
    for k, v in value.items():
        kind = type(v)
        if kind is str:
            if v:
                out[k] = v
        elif kind is dict:
            pv = _prune_dict(v)
            if pv:
                out[k] = pv
        elif kind is list:
            if v:
                out[k] = _prune_list(v)
        elif kind is int or kind is bool:
            out[k] = v
        elif kind is float:
            out[k] = _float(v)
        elif v is not None:
            pv = _prune(v)
            if _keep(pv):
                out[k] = pv
    return out


def _prune_list(value: list) -> list:
    return [
        v if type(v) is str else (_prune_dict(v) if type(v) is dict else _prune(v)) for v in value
    ]


def _prune(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return _prune_dict(value)
    if kind is str or kind is int or kind is bool:
        return value
    if kind is list:
        return _prune_list(value)
    if isinstance(value, dict):
        return {k: pv for k, v in value.items() if _keep(pv := _prune(v))}
    if isinstance(value, list | tuple):
        return [_prune(v) for v in value]
    if isinstance(value, float):
        return _float(value)
    return value


# orjson writes the same bytes as `json.dumps(..., sort_keys=True, separators=(",", ":"),
# ensure_ascii=False)` except for floats below 1e-4 (`0.00001` / `1e-5` against `1e-05`): output
# that may hold one, and values orjson refuses (ints over 64 bits, lone surrogates), take the
# standard library's path.
_EXPONENT = re.compile(rb"\de-")


def _maybe_small_float(out: bytes) -> bool:
    # substring tests first: a regex scan of the whole text costs more than the encoding
    return b"0.0000" in out or (b"e-" in out and _EXPONENT.search(out) is not None)


def _canonical(value: Any) -> bytes | str:
    """Canonical JSON as UTF-8 bytes (orjson) or, on the standard library's path, as text."""
    pruned = _prune(value)
    try:
        out = orjson.dumps(pruned, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        out = None
    if out is None or _maybe_small_float(out):
        return json.dumps(
            pruned, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    return out


def canonical_json(value: Any) -> str:
    """Deterministic JSON text for `value` (already JSON-compatible)."""
    out = _canonical(value)
    return out if isinstance(out, str) else out.decode("utf-8")


def content_id(meaning: dict[str, Any]) -> str:
    out = _canonical(meaning)
    data = out.encode("utf-8") if isinstance(out, str) else out
    return ID_PREFIX + hashlib.sha256(data).hexdigest()[:ID_HEX_DIGITS]


def short_hash(text: str, digits: int = 16) -> str:
    """A stable hash of a text (prompts, files) for provenance."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:digits]
