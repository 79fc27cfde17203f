"""A fast acceptance check for the small JSON Schemas of tool parameters.

`compile_acceptor(schema)` turns a schema that uses only simple keywords (type, properties,
required, additionalProperties, enum of strings, minLength, maxLength, minItems, maxItems,
items, minimum, maximum, exclusiveMinimum, exclusiveMaximum, anyOf, local $ref, and
annotations) into a predicate
that answers True only when the instance is certainly valid. It may answer False for a valid
instance (it is stricter on exotic types); callers then run the full `jsonschema` validator,
which also words the errors. A schema with any other keyword compiles to None: always use
`jsonschema`. This keeps the semantic checks, the simulated tools and the JSON Schema layer of validation fast
on the common path (valid input) without changing any result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Acceptor = Callable[[Any], bool]

# `format` is an annotation in Draft 2020-12 unless a format checker is asked for (it is not).
ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment", "format"})
SUPPORTED = ANNOTATIONS | {
    "$ref",
    "anyOf",
    "$defs",
    "$id",
    "$schema",
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
    a keyword this module does not handle. Local references (`#/$defs/...`) resolve against
    `schema` itself."""
    return _Compiler(schema).compile(schema)


class _Compiler:
    def __init__(self, root: Any):
        self.root = root
        self.refs: dict[str, Acceptor | None] = {}
        self.pending: set[str] = set()

    def ref(self, pointer: Any) -> Acceptor | None:
        if not isinstance(pointer, str) or not pointer.startswith("#/$defs/"):
            return None
        name = pointer.removeprefix("#/$defs/")
        if name in self.refs:
            return self.refs[name]
        if name in self.pending:  # a recursive schema: not handled, use jsonschema
            return None
        defs = self.root.get("$defs") if isinstance(self.root, dict) else None
        if not isinstance(defs, dict) or name not in defs:
            return None
        self.pending.add(name)
        self.refs[name] = self.compile(defs[name])
        self.pending.discard(name)
        return self.refs[name]

    def compile(self, schema: Any) -> Acceptor | None:
        if schema is True or schema == {}:
            return lambda v: True
        if not isinstance(schema, dict) or set(schema) - SUPPORTED:
            return None
        checks: list[Acceptor] = []
        for part in (
            self._type(schema),
            self._enum(schema),
            self._ref(schema),
            self._any_of(schema),
            self._object(schema),
            self._items(schema),
        ):
            if part is False:
                return None
            if part is not None:
                checks.append(part)
        bounds = _bounds(schema)
        if bounds is None:
            return None
        checks += bounds
        if len(checks) == 1:
            return checks[0]
        return lambda v: all(check(v) for check in checks)

    # each part: an acceptor, None (keyword absent) or False (not handled)
    def _type(self, schema: dict[str, Any]) -> Acceptor | None | bool:
        kind = schema.get("type")
        if kind is None:
            return None
        return _TYPES.get(kind, False) if isinstance(kind, str) else False

    def _enum(self, schema: dict[str, Any]) -> Acceptor | None | bool:
        if "enum" not in schema:
            return None
        values = schema["enum"]
        if not isinstance(values, list) or not all(type(x) is str for x in values):
            return False
        allowed = frozenset(values)
        return lambda v: type(v) is str and v in allowed

    def _ref(self, schema: dict[str, Any]) -> Acceptor | None | bool:
        if "$ref" not in schema:
            return None
        return self.ref(schema["$ref"]) or False

    def _any_of(self, schema: dict[str, Any]) -> Acceptor | None | bool:
        if "anyOf" not in schema:
            return None
        branches = (
            [self.compile(b) for b in schema["anyOf"]]
            if isinstance(schema["anyOf"], list)
            else [None]
        )
        if not branches or any(b is None for b in branches):
            return False
        return lambda v: any(b(v) for b in branches)

    def _items(self, schema: dict[str, Any]) -> Acceptor | None | bool:
        if "items" not in schema:
            return None
        item = self.compile(schema["items"])
        if item is None:
            return False
        return lambda v: all(item(x) for x in v) if type(v) is list else type(v) in _PLAIN

    def _object(self, schema: dict[str, Any]) -> Acceptor | None | bool:
        """The object keywords as one check."""
        if not ({"properties", "required", "additionalProperties"} & set(schema)):
            return None
        props: dict[str, Acceptor] = {}
        for name, sub in (schema.get("properties") or {}).items():
            compiled = self.compile(sub)
            if compiled is None:
                return False
            props[name] = compiled
        required = tuple(schema.get("required") or ())
        extra_schema = schema.get("additionalProperties", True)
        extra = self.compile(extra_schema) if extra_schema is not False else None
        if extra_schema is not False and extra is None:
            return False

        def check(value: Any) -> bool:
            if type(value) is not dict:
                return type(value) in _PLAIN  # "type" says whether a non-object is allowed
            for name in required:
                if name not in value:
                    return False
            for key, item in value.items():
                accept = props.get(key, extra)
                if accept is None or not accept(item):
                    return False
            return True

        return check
