"""A fast acceptance check for the small JSON Schemas of tool parameters.

`compile_acceptor(schema)` turns a schema that uses only simple keywords (type, properties,
required, additionalProperties, enum of strings, minLength, maxLength, minItems, maxItems,
items, minimum, maximum, exclusiveMinimum, exclusiveMaximum, and annotations) into a predicate
that answers True only when the instance is certainly valid. It may answer False for a valid
instance (it is stricter on exotic types); callers then run the full `jsonschema` validator,
which also words the errors. A schema with any other keyword compiles to None: always use
`jsonschema`. This keeps the semantic checks and the simulated tools fast on the common path
(valid parameters) without changing any result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Acceptor = Callable[[Any], bool]

ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment"})
SUPPORTED = ANNOTATIONS | {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "items",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
}


def _is_number(value: Any) -> bool:
    return type(value) is int or type(value) is float


# Exact types of parsed JSON. Anything else (str subclasses, Decimal, tuples, ...) is "unsure":
# the acceptor answers False and the caller runs the full validator.
_PLAIN = frozenset({str, int, float, bool, list, dict, type(None)})


_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: type(v) is str,
    "number": _is_number,
    "integer": lambda v: type(v) is int,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "array": lambda v: type(v) is list,
    "object": lambda v: type(v) is dict,
}


def _bounds(schema: dict[str, Any]) -> list[Acceptor] | None:
    checks: list[Acceptor] = []
    numeric = {
        "minimum": lambda v, b: v >= b,
        "maximum": lambda v, b: v <= b,
        "exclusiveMinimum": lambda v, b: v > b,
        "exclusiveMaximum": lambda v, b: v < b,
    }
    for key, compare in numeric.items():
        if key in schema:
            limit = schema[key]
            if not _is_number(limit):
                return None
            checks.append(
                lambda v, b=limit, c=compare: c(v, b) if _is_number(v) else type(v) in _PLAIN
            )
    sizes = {
        "minLength": (str, lambda n, m: n >= m),
        "maxLength": (str, lambda n, m: n <= m),
        "minItems": (list, lambda n, m: n >= m),
        "maxItems": (list, lambda n, m: n <= m),
    }
    for key, (kind, compare) in sizes.items():
        if key in schema:
            limit = schema[key]
            if type(limit) is not int:
                return None
            checks.append(
                lambda v, m=limit, k=kind, c=compare: (
                    c(len(v), m) if type(v) is k else type(v) in _PLAIN
                )
            )
    return checks


def compile_acceptor(schema: Any) -> Acceptor | None:
    """A predicate accepting only instances valid under `schema`, or None when the schema uses
    a keyword this module does not handle."""
    if schema is True or schema == {}:
        return lambda v: True
    if not isinstance(schema, dict) or set(schema) - SUPPORTED:
        return None
    checks: list[Acceptor] = []
    kind = schema.get("type")
    if kind is not None:
        if not isinstance(kind, str) or kind not in _TYPES:
            return None
        checks.append(_TYPES[kind])
    if "enum" in schema:
        values = schema["enum"]
        if not isinstance(values, list) or not all(type(x) is str for x in values):
            return None
        allowed = frozenset(values)
        checks.append(lambda v: type(v) is str and v in allowed)
    bounds = _bounds(schema)
    if bounds is None:
        return None
    checks += bounds
    obj = _object_check(schema)
    if obj is False:
        return None
    if obj is not None:
        checks.append(obj)
    if "items" in schema:
        item = compile_acceptor(schema["items"])
        if item is None:
            return None
        checks.append(lambda v: all(item(x) for x in v) if type(v) is list else type(v) in _PLAIN)
    return lambda v: all(check(v) for check in checks)


def _object_check(schema: dict[str, Any]) -> Acceptor | None | bool:
    """The object keywords as one check; None when there are none, False when unsupported."""
    if not ({"properties", "required", "additionalProperties"} & set(schema)):
        return None
    props: dict[str, Acceptor] = {}
    for name, sub in (schema.get("properties") or {}).items():
        compiled = compile_acceptor(sub)
        if compiled is None:
            return False
        props[name] = compiled
    required = tuple(schema.get("required") or ())
    extra = schema.get("additionalProperties", True)
    if extra not in (True, False):
        return False

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return type(value) in _PLAIN  # "type" says whether a non-object is allowed
        for name in required:
            if name not in value:
                return False
        for key, item in value.items():
            accept = props.get(key)
            if accept is None:
                if not extra:
                    return False
            elif not accept(item):
                return False
        return True

    return check
