"""Migrations of older case shapes, applied before validation.

Each migration is a named function from version N to N+1; `migrate` runs the chain from the
record's `schema_version` up to the current one. A record without `schema_version` is taken as
current. A record from a newer Casemill is refused with a message saying so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# version N -> function turning an N-shaped dict into an N+1-shaped dict
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    from casemill.case.model import SCHEMA_VERSION

    version = data.get("schema_version", SCHEMA_VERSION)
    if type(version) is float and version.is_integer():
        version = int(version)  # JSON Schema's integer: 1.0 is 1 (the field reads it so too)
    if type(version) is not int or version < 1:  # not a bool, a string or a fraction either
        raise ValueError(f"schema_version must be a positive integer, got {version!r}")
    if version > SCHEMA_VERSION:
        raise ValueError(
            f"schema_version {version} is newer than this Casemill understands "
            f"({SCHEMA_VERSION}); upgrade casemill"
        )
    while version < SCHEMA_VERSION:
        data = MIGRATIONS[version](dict(data))
        version += 1
        data["schema_version"] = version
    return data
