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


def _keep(value: Any) -> bool:
    return value is not None and not (isinstance(value, str | list | dict) and not value)


def _prune(value: Any) -> Any:
    # Exact-type fast paths for the common leaves (str, int, bool) skip a recursive call; every
    # other value takes the general path, so the output is the same for any input.
    kind = type(value)
    if kind is dict:
        out = {}
        for k, v in value.items():
            vk = type(v)
            if vk is str:
                if v:
                    out[k] = v
            elif vk is int or vk is bool:
                out[k] = v
            else:
                pv = _prune(v)
                if _keep(pv):
                    out[k] = pv
        return out
    if kind is str or kind is int or kind is bool:
        return value
    if isinstance(value, dict):
        return {k: pv for k, v in value.items() if _keep(pv := _prune(v))}
    if isinstance(value, list | tuple):
        return [v if type(v) is str else _prune(v) for v in value]
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
