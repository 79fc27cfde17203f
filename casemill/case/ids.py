"""Canonical JSON and content ids.

The id of a case is `c_` + the first 20 hex digits of the SHA-256 of the canonical JSON of what the
case means (domain, environment, conversation, user scenario, expected). Canonical JSON: keys
sorted, no insignificant white space, UTF-8, and empty values (None, "", [], {}) dropped
recursively, so that adding an optional field to the model later does not change any id.

Canonical JSON composes (`canonical_member`, `canonical_object`, `canonical_array`), so the
canonical JSON of a case is put together from that of its parts, and `IdentityMemo` remembers the
parts' for as long as the (frozen) part lives: a derived case serialises only what it changes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

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
# list, tuple); anything else (subclasses) takes the general path in `other` (`_prune`), so the
# result is the same for any input. A non-empty list stays non-empty (elements are never dropped).
def _prune_dict(value: dict, other: Callable[[Any], Any] | None = None) -> dict:
    other = other or _prune
    out = {}
    for k, v in value.items():
        if v is None:  # dropped (checked first: the commonest value of a dumped model)
            continue
        kind = type(v)
        if kind is str:
            if v:
                out[k] = v
        elif kind is dict:
            pv = _prune_dict(v, other)
            if pv:
                out[k] = pv
        elif kind is list or kind is tuple:
            if v:
                out[k] = _prune_list(v, other)
        elif kind is int or kind is bool:
            out[k] = v
        elif kind is float:
            out[k] = _float(v)
        else:
            pv = other(v)
            if _keep(pv):
                out[k] = pv
    return out


def _prune_list(value: list | tuple, other: Callable[[Any], Any] | None = None) -> list:
    other = other or _prune
    return [
        v if type(v) is str else (_prune_dict(v, other) if type(v) is dict else other(v))
        for v in value
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


def maybe_small_float(out: bytes) -> bool:
    # substring tests first: a regex scan of the whole text costs more than the encoding
    return b"0.0000" in out or (b"e-" in out and _EXPONENT.search(out) is not None)


def _canonical(value: Any) -> bytes | str:
    """Canonical JSON as UTF-8 bytes (orjson) or, on the standard library's path, as text."""
    return _encode(_prune(value))


def _encode(pruned: Any) -> bytes | str:
    try:
        out = orjson.dumps(pruned, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return _standard(pruned)
    return _standard(pruned) if maybe_small_float(out) else out


def _standard(pruned: Any) -> str:
    """The standard library's canonical JSON text of a pruned value."""
    return json.dumps(
        pruned, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def canonical_json(value: Any) -> str:
    """Deterministic JSON text for `value` (already JSON-compatible)."""
    out = _canonical(value)
    return out if isinstance(out, str) else out.decode("utf-8")


def canonical_bytes(value: Any) -> bytes:
    """`canonical_json(value)` as UTF-8 bytes."""
    return _utf8(_canonical(value))


def _utf8(out: bytes | str) -> bytes:
    # orjson's bytes keep its whole (over-allocated) buffer: a copy, as these may be remembered
    return out.encode("utf-8") if isinstance(out, str) else bytes(memoryview(out))


# Canonical JSON composes: an object's is `{"key":value,...}` over its members' canonical JSON
# with the keys sorted and the members that pruning drops left out, a list's is `[...]` over its
# elements' (elements are never dropped). Each part takes the standard library's path on its own
# when it needs to; the two paths write the same bytes for anything else, so the whole is the same
# as `canonical_bytes` of the whole value. Callers that keep the canonical JSON of unchanged parts
# (see `Case.canonical_meaning`) do not serialise them again.
def canonical_member(value: Any) -> bytes | None:
    """The canonical JSON of `value` as the value of an object's member, or None when pruning
    drops the member (None, and "", [] or {} once pruned)."""
    pruned = _prune(value)
    return _utf8(_encode(pruned)) if _keep(pruned) else None


def canonical_object(members: Mapping[str, bytes | None]) -> bytes:
    """The canonical JSON of an object from its members' (`canonical_member`; None: dropped)."""
    return (
        b"{"
        + b",".join(_key(k) + b":" + v for k, v in sorted(members.items()) if v is not None)
        + b"}"
    )


def canonical_fragments(members: dict[str, Any]) -> bytes:
    """The canonical JSON of an object whose members are already pruned and either hold no
    float or are `orjson.Fragment`s of canonical JSON (written as they are): one pass instead of
    `canonical_object` over each member's. `NotPlain` if orjson refuses a value (a lone
    surrogate, a key that is not a str, an int over 64 bits)."""
    try:
        return orjson.dumps(members, option=orjson.OPT_SORT_KEYS)
    except TypeError as exc:
        raise NotPlain from exc


def canonical_array(elements: Iterable[bytes]) -> bytes:
    """The canonical JSON of a list from its elements' (`canonical_bytes`)."""
    return b"[" + b",".join(elements) + b"]"


# The pruned JSON dump of plain data, computed from the data itself: what `_prune` makes of
# pydantic's `model_dump(mode="json")` of a frozen model or of an `Any` value, for the exact types
# of JSON (dicts with str keys; lists and tuples; str, int, bool, finite float, None) and models
# made of them, read from their fields. The dump of such data is a copy of it (models as dicts of
# their fields, tuples as lists), so the canonical JSON is the same without the copy. Anything
# else (a subclass, a datetime, a model with serialisers or extra fields, a non-finite float; a
# key that is not a str, when encoding) raises `NotPlain`, and the caller dumps the value and
# prunes the dump.
class NotPlain(Exception):
    """The value is not plain JSON data or a plain model: dump it first."""


def prune_plain(value: Any) -> Any:
    """`_prune` of the JSON dump of `value` without the dump; `NotPlain` if it needs one."""
    try:
        return _plain_item(value)
    except ValueError as exc:  # a non-finite float: the dump's own handling applies
        raise NotPlain from exc


def canonical_pruned(pruned: Any) -> bytes:
    """The canonical JSON of a value `prune_plain` returned; `NotPlain` if orjson refuses it (a
    key that is not a str, whose dump would be one; an int over 64 bits)."""
    try:
        out = orjson.dumps(pruned, option=orjson.OPT_SORT_KEYS)
    except TypeError as exc:
        raise NotPlain from exc
    return _utf8(_standard(pruned) if maybe_small_float(out) else out)


def member_of_pruned(pruned: Any) -> bytes | None:
    """`canonical_member` of a value `prune_plain` returned (`NotPlain` as `canonical_pruned`)."""
    return canonical_pruned(pruned) if _keep(pruned) else None


def _plain_item(v: Any) -> Any:
    kind = type(v)
    if kind is str or kind is int or kind is bool or v is None:
        return v
    if kind is dict:
        return _prune_dict(v, _plain_item)
    if kind is list or kind is tuple:
        return _prune_list(v, _plain_item)
    if kind is float:
        return _float(v)
    return _plain_model(v)


def _plain_model(model: Any) -> dict:
    fields = _PLAIN_MODELS.get(type(model))
    if fields is None:
        fields = _PLAIN_MODELS[type(model)] = _plain_fields(type(model))
    if not fields or model.__dict__.keys() != fields or model.__pydantic_extra__:
        raise NotPlain
    return _prune_dict(model.__dict__, _plain_item)


_PLAIN_MODELS: dict[type, frozenset[str]] = {}


def _plain_fields(cls: type) -> frozenset[str]:
    """The fields of a pydantic model class whose JSON dump is a dict of all its fields' dumps,
    or an empty set (not a plain model)."""
    decorators = getattr(cls, "__pydantic_decorators__", None)
    fields = getattr(cls, "model_fields", None)
    if decorators is None or not isinstance(fields, dict) or not fields:
        return frozenset()
    if decorators.field_serializers or decorators.model_serializers:
        return frozenset()
    if getattr(cls, "model_computed_fields", None) or cls.model_config.get("extra") == "allow":
        return frozenset()
    if any(f.exclude for f in fields.values()):
        return frozenset()
    return frozenset(fields)


@functools.lru_cache(maxsize=1024)
def _key(key: str) -> bytes:
    return json.dumps(key, ensure_ascii=False).encode("utf-8")


def content_id(meaning: dict[str, Any]) -> str:
    return id_of_canonical(canonical_bytes(meaning))


# a copy of an empty hash costs less than a new one (OpenSSL looks the algorithm up each time)
_SHA256 = hashlib.sha256()


def id_of_canonical(data: bytes) -> str:
    """The content id of a case whose meaning's canonical JSON is `data`."""
    digest = _SHA256.copy()
    digest.update(data)
    return ID_PREFIX + digest.hexdigest()[:ID_HEX_DIGITS]


def short_hash(text: str, digits: int = 16) -> str:
    """A stable hash of a text (prompts, files) for provenance."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:digits]


T = TypeVar("T")


class _Ref(weakref.ref):
    __slots__ = ("key", "value")


class IdentityMemo(Generic[T]):
    """`compute(obj)`, remembered for as long as `obj` lives.

    Keyed by identity, so only for objects whose content never changes: the frozen case models
    (a changed part is a new object; their dicts are never edited in place). One weak reference
    per object holds the value, and goes with the object."""

    def __init__(self, compute: Callable[[Any], T]):
        self._compute = compute
        self._refs: dict[int, _Ref] = {}
        refs = self._refs

        def forget(ref: _Ref) -> None:
            if refs.get(ref.key) is ref:
                del refs[ref.key]

        self._forget = forget

    def __call__(self, obj: Any) -> T:
        key = id(obj)
        ref = self._refs.get(key)
        if ref is not None and ref() is obj:
            return ref.value
        value = self._compute(obj)
        ref = _Ref(obj, self._forget)
        ref.key, ref.value = key, value
        self._refs[key] = ref
        return value

    def __len__(self) -> int:
        return len(self._refs)
