"""OTLP JSON values as Python ones: an attribute's `{"stringValue": ...}`, `intValue` (a string
in JSON), arrays and key/value lists, and an attribute list `[{"key", "value"}]` as a dict (a
dict already read is given back as it is). Shared by the OTel parser's modules."""

from __future__ import annotations

from typing import Any


def attr_value(value: dict[str, Any]) -> Any:
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [attr_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return attributes(value["kvlistValue"].get("values", []))
    return None


def attributes(items: Any) -> dict[str, Any]:
    if isinstance(items, dict):
        return items
    out = {}
    for item in items or []:
        if isinstance(item, dict) and "key" in item:
            out[item["key"]] = attr_value(item.get("value", {}))
    return out
