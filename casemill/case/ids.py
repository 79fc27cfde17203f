"""Canonical JSON and content ids.

The id of a case is `c_` + the first 20 hex digits of the SHA-256 of the canonical JSON of what the
case means (domain, environment, conversation, user scenario, expected). Canonical JSON: keys
sorted, no insignificant white space, UTF-8, and empty values (None, "", [], {}) dropped
recursively, so that adding an optional field to the model later does not change any id.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

ID_PREFIX = "c_"
ID_HEX_DIGITS = 20


def _prune(value: Any) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            pv = _prune(v)
            if pv is None or pv == "" or pv == [] or pv == {}:
                continue
            out[k] = pv
        return out
    if isinstance(value, list | tuple):
        return [_prune(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def canonical_json(value: Any) -> str:
    """Deterministic JSON text for `value` (already JSON-compatible)."""
    return json.dumps(
        _prune(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def content_id(meaning: dict[str, Any]) -> str:
    digest = hashlib.sha256(canonical_json(meaning).encode("utf-8")).hexdigest()
    return ID_PREFIX + digest[:ID_HEX_DIGITS]


def short_hash(text: str, digits: int = 16) -> str:
    """A stable hash of a text (prompts, files) for provenance."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:digits]
