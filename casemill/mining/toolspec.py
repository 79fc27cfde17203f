"""Tool specifications of the logged agent, and mined calls checked against them.

A log may say which tools its agent had: a `tools` list on an OpenAI chat-format line, in
OpenAI's format (`[{"type": "function", "function": {"name", "description", "parameters"}}]`,
`parameters` a JSON Schema), or a file of that list given with `casemill mine --tools`. The
Responses API's flat entries (`{"type": "function", "name", "parameters"}`) and Anthropic's
(`{"name", "description", "input_schema"}`) are read as the same.

With a spec, a logged call's arguments are normalised before they become expected calls: keys an
object schema does not declare (it has `properties` and `additionalProperties` is not `true` or
a schema) are dropped, recursively through nested objects and arrays, since the tool never
reads them. What was dropped is reported. A call that breaks its spec in any other way (a
required argument missing, a wrong type, a tool the spec does not list) is kept as logged (less
any undeclared keys) and its problems reported, so the case can be marked as needing a label.
Inside `anyOf`, `oneOf` and `allOf` nothing is dropped (which branch applies is not known).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from casemill.domains.base import param_errors
from casemill.errors import UserError

NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
MAX_PROBLEMS = 3  # schema errors reported per call
MAX_SHOWN = 8  # dropped paths named per call


class ToolSpecError(ValueError):
    """A tools list that is not in OpenAI's function format; the message names the entry."""


@dataclass(frozen=True)
class ToolSpecs:
    """Tool specifications by name, each normalised to `{"type": "function", "function":
    {"name", "parameters", ...}}` (a missing `parameters` means the tool takes none)."""

    by_name: dict[str, dict[str, Any]]

    def __len__(self) -> int:
        return len(self.by_name)


@dataclass(frozen=True)
class Conformed:
    """A call's arguments after normalisation, the paths of the keys dropped
    (`flights[0].origin`) and what else is wrong with the call, in words."""

    arguments: dict[str, Any]
    dropped: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def dropped_text(self, tool: str) -> str:
        """`tool(path, path, ...)`: what was dropped, in a note."""
        shown = self.dropped[:MAX_SHOWN]
        more = len(self.dropped) - len(shown)
        return f"{tool}({', '.join(shown)}{f' and {more} more' if more else ''})"


def parse_tools(value: Any) -> ToolSpecs:
    """Tool specs from a list in OpenAI's format; raises `ToolSpecError` naming the bad entry."""
    if not isinstance(value, list):
        raise ToolSpecError("tools must be a JSON list of {'type': 'function', 'function': {...}}")
    by_name: dict[str, dict[str, Any]] = {}
    for index, entry in enumerate(value):
        spec = _one_spec(entry, f"tools[{index}]")
        name = spec["function"]["name"]
        if name in by_name:
            raise ToolSpecError(f"tools[{index}]: tool {name!r} is specified twice")
        by_name[name] = spec
    return ToolSpecs(by_name)


def _function(entry: Any) -> Any:
    """The entry's function in OpenAI's shape, from its own or the Responses API's flat one or
    Anthropic's (`input_schema` for `parameters`)."""
    if not isinstance(entry, dict) or "function" in entry or not isinstance(entry.get("name"), str):
        return entry.get("function") if isinstance(entry, dict) else None
    fn = {k: v for k, v in entry.items() if k not in ("type", "input_schema")}
    if "input_schema" in entry:
        fn["parameters"] = entry["input_schema"]
    return fn


def _one_spec(entry: Any, where: str) -> dict[str, Any]:
    fn = _function(entry)
    if not isinstance(fn, dict) or entry.get("type", "function") not in ("function", "custom"):
        raise ToolSpecError(f"{where}: expected {{'type': 'function', 'function': {{...}}}}")
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise ToolSpecError(f"{where}: function.name must be a non-empty string")
    parameters = fn.get("parameters", NO_PARAMETERS)
    if not isinstance(parameters, dict):
        raise ToolSpecError(f"{where} ({name}): function.parameters must be a JSON Schema object")
    try:
        Draft202012Validator.check_schema(parameters)
    except SchemaError as exc:
        raise ToolSpecError(
            f"{where} ({name}): function.parameters is not a valid JSON Schema: {exc.message}"
        ) from None
    return {"type": "function", "function": {**fn, "parameters": parameters}}


class SpecCache:
    """`parse_tools` for logs that repeat one tools list on every line: each distinct list is
    parsed (and its schemas checked) once."""

    def __init__(self, size: int = 64):
        self.size = size
        self.seen: dict[bytes, ToolSpecs] = {}

    def parse(self, value: Any) -> ToolSpecs:
        key = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        specs = self.seen.get(key)
        if specs is None:
            specs = parse_tools(value)
            if len(self.seen) < self.size:
                self.seen[key] = specs
        return specs


def load_tools_file(path: Path) -> ToolSpecs:
    """The specs of a JSON file holding an OpenAI `tools` list; `UserError` naming the file."""
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"{path}: cannot read the tools file ({exc.strerror})") from None
    except ValueError as exc:
        raise UserError(f"{path}: the tools file is not JSON ({exc})") from None
    try:
        return parse_tools(value)
    except ToolSpecError as exc:
        raise UserError(f"{path}: not a valid tools file: {exc}") from None


def conform(tool: str, arguments: dict[str, Any], specs: ToolSpecs) -> Conformed:
    """`arguments` of a call to `tool` normalised against its spec and checked with it."""
    spec = specs.by_name.get(tool)
    if spec is None:
        return Conformed(
            arguments, problems=[f"{tool}: unknown tool (not in the tool specifications)"]
        )
    schema = spec["function"]["parameters"]
    dropped: list[str] = []
    kept = _prune(schema, arguments, schema, "", dropped)
    errors = param_errors(spec, kept)
    problems = [f"{tool}: {e}" for e in errors[:MAX_PROBLEMS]]
    if len(errors) > MAX_PROBLEMS:
        problems.append(f"{tool}: {len(errors) - MAX_PROBLEMS} more problem(s)")
    return Conformed(kept, dropped, problems)


def _resolve(schema: Any, root: Any, depth: int = 0) -> Any:
    """Follow a local `$ref` (`#/$defs/...`, any JSON pointer into the root schema)."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < 32:
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return {}  # a remote reference: nothing is known, nothing is dropped
        target: Any = root
        for part in filter(None, ref[1:].split("/")):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
        schema, depth = target, depth + 1
    return schema if isinstance(schema, dict) else {}


def _prune(schema: Any, value: Any, root: Any, path: str, dropped: list[str]) -> Any:
    schema = _resolve(schema, root)
    if isinstance(value, dict):
        return _prune_object(schema, value, root, path, dropped)
    if isinstance(value, list):
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        if isinstance(items, list):  # the tuple form of drafts before 2020-12
            prefix, items = items, schema.get("additionalItems")
        prefix = prefix if isinstance(prefix, list) else []
        out = []
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else items
            out.append(_prune(sub, item, root, f"{path}[{i}]", dropped) if sub else item)
        return out
    return value


def _prune_object(
    schema: dict[str, Any], value: dict[str, Any], root: Any, path: str, dropped: list[str]
) -> dict[str, Any]:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return value
    extra = schema.get("additionalProperties")
    patterns = schema.get("patternProperties")
    patterns = patterns if isinstance(patterns, dict) else {}
    out: dict[str, Any] = {}
    for key, item in value.items():
        where = f"{path}.{key}" if path else key
        sub = properties.get(key)
        if sub is None:
            sub = next((s for p, s in patterns.items() if re.search(p, key)), None)
        if sub is None and extra is not True and not isinstance(extra, dict):
            dropped.append(where)
            continue
        sub = sub if sub is not None else extra
        out[key] = _prune(sub, item, root, where, dropped) if isinstance(sub, dict) else item
    return out
