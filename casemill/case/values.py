"""Field types of the case model that take JSON values as the JSON Schema describes them.

A case file is canonical data, and `schemas/case.schema.json` (generated from the model) is the
published contract: the model must refuse what the schema refuses. Lax pydantic would coerce
`"2"` or `true` into an integer, `"0.5"` into a float, `1` or `"yes"` into a bool and a number
into a datetime; these types refuse them, so `casemill validate` (schema, then model) and the
readers that use the model alone (export, the corpus) accept the same records.

- `JsonInt`: an int, or a float with no fractional part (JSON Schema's "integer" takes `2.0`);
  never a string or a bool;
- `JsonFloat`: an int or a float, finite (the models' config refuses NaN and infinities);
- `JsonBool`: `true` or `false` only;
- `JsonTime`: a datetime, or a string that starts with an ISO 8601 date (no unix timestamps);
- `JsonObject`, `JsonData`: free-form JSON (tool-call parameters, environment state) whose
  numbers are finite. Python's `json` reads `NaN` and `Infinity`, which are not JSON, and ints
  of any size, which a double holds as an infinity past 1.8e308: a case holding one is refused
  with the path to the number, not passed on to a domain (whose arithmetic it would break) or
  to a writer (pydantic writes NaN as null).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Strict, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

_INFINITIES = (math.inf, -math.inf)
# the smallest int a double cannot hold (it rounds to 2**1024): a reader of JSON numbers as
# doubles takes it, and any larger, as an infinity, and Python's float() refuses it
_DOUBLE_LIMIT = 2**1024 - 2**970
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _json_int(value: Any) -> Any:
    kind = type(value)
    if kind is int:
        return value
    if kind is float and value.is_integer():
        return int(value)
    if isinstance(value, str | bool | bytes):
        raise PydanticCustomError(
            "int_type", "Input should be an integer, not {kind}", {"kind": _kind(value)}
        )
    return value  # a fractional or non-finite float, a Decimal...: pydantic's int says why


def _json_time(value: Any) -> Any:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise PydanticCustomError(
            "datetime_type",
            "Input should be an ISO 8601 date-time string (2026-01-02T03:04:05Z), not {kind}",
            {"kind": _kind(value)},
        )
    if not _ISO_DATE.match(value):
        raise PydanticCustomError(
            "datetime_parsing",
            "Input should be an ISO 8601 date-time (2026-01-02T03:04:05Z), not {value!r}",
            {"value": value[:40]},
        )
    return value


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str | bytes):
        return f"a string ({value[:40]!r})"
    return type(value).__name__


JsonInt = Annotated[int, BeforeValidator(_json_int)]
JsonFloat = Annotated[float, Strict()]
JsonBool = Annotated[bool, Strict()]
JsonTime = Annotated[datetime, BeforeValidator(_json_time)]


def has_non_finite(value: Any) -> bool:
    """Whether a NaN, an infinity or too large an int is anywhere in `value` (exact JSON types
    first: this runs on every environment and every call's parameters)."""
    kind = type(value)
    if kind is dict:
        items: Any = value.values()
    elif kind is list or kind is tuple:
        items = value
    elif kind is float:
        return value != value or value in _INFINITIES
    elif kind is int:
        return not -_DOUBLE_LIMIT < value < _DOUBLE_LIMIT
    elif kind is str or kind is bool or value is None:
        return False
    else:
        return _non_finite_other(value)
    for item in items:
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if not -_DOUBLE_LIMIT < item < _DOUBLE_LIMIT:
                return True
        elif kind is float:
            if item != item or item in _INFINITIES:
                return True
        elif has_non_finite(item):
            return True
    return False


def _non_finite_other(value: Any) -> bool:
    """`has_non_finite` for subclasses (a float subclass, an ordered dict, ...)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return not -_DOUBLE_LIMIT < value < _DOUBLE_LIMIT
    if isinstance(value, Mapping):
        return any(has_non_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(has_non_finite(v) for v in value)
    return False


def _non_finite_places(value: Any, loc: tuple[str | int, ...] = ()) -> Iterator[tuple]:
    """(location, number) of every NaN, infinity or too large an int in `value`."""
    if isinstance(value, float):
        if not math.isfinite(value):
            yield loc, value
    elif isinstance(value, int) and not isinstance(value, bool):
        if not -_DOUBLE_LIMIT < value < _DOUBLE_LIMIT:
            yield loc, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _non_finite_places(item, (*loc, str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _non_finite_places(item, (*loc, index))


def _finite(value: Any) -> Any:
    """`value` when every number in it is finite; otherwise a `ValidationError` with one error
    per NaN, infinity or too large an int, located inside `value` (pydantic prefixes the
    field's own location: `expected.tool_calls[0].params.amount`)."""
    if not has_non_finite(value):
        return value
    errors = [
        InitErrorDetails(
            type=PydanticCustomError("finite_number", "{message}", {"message": _message(number)}),
            loc=loc,
            input=number,
        )
        for loc, number in _non_finite_places(value)
    ]
    raise ValidationError.from_exception_data("finite JSON numbers", errors)


def _message(number: float | int) -> str:
    if isinstance(number, int):
        return (
            "Input should be a finite number, not an integer beyond ±1.8e308 (a reader that "
            "holds JSON numbers as doubles takes it as Infinity)"
        )
    spelling = "NaN" if number != number else ("Infinity" if number > 0 else "-Infinity")
    return (
        f"Input should be a finite number, not {spelling} (NaN and Infinity are not JSON numbers)"
    )


JsonObject = Annotated[dict[str, Any], AfterValidator(_finite)]
JsonData = Annotated[Any, AfterValidator(_finite)]
