"""One way to plug things into Casemill: a kind of plugin is a `Protocol` and an entry-point group.

Every kind of extension (domain packs, operators, agent adapters, log formats, importers,
exporters, metrics, gate checks) is found the same way. A package declares its objects in its
`pyproject.toml`, one table a kind, the entry point's name being the name Casemill knows the
object by:

    [project.entry-points."casemill.metrics"]
    polite = "my_metrics:Polite"

Casemill's own built-ins are declared exactly so, in Casemill's `pyproject.toml`, and listed
with their origin by `casemill plugins list`. An entry point is loaded the first time its name is
asked for (so a broken plugin costs nothing until it is used), checked against its kind's
`Protocol` (an object lacking a member is a `UserError` naming the entry point, its package and
what it lacks), and kept for the rest of the process. An entry point naming a class is made
without arguments.

`register(kind, obj)` does the same from Python, for a notebook or a script; `refresh()` forgets
what was read of the installed packages (after `pip install` in a running notebook).

This module is part of the core: it imports nothing from the stage packages at module level;
each kind names its Protocol (and an optional check) by dotted path, imported when needed.

    >>> from casemill import plugins
    >>> plugins.get("agent", "reference")  # doctest: +SKIP
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from casemill.errors import UserError
from casemill.loading import import_module, load_object, raised

log = logging.getLogger(__name__)

BUILT_IN = "built-in"  # the origin of what Casemill's own distribution declares
REGISTERED = "registered"  # the origin of what `register` added in this process
_OWN_DISTRIBUTION = "casemill"


@dataclass(frozen=True)
class PluginKind:
    """One kind of plugin: its entry-point group, its Protocol and how its objects are checked.

    `protocol` and `check` are dotted paths (`module:attr`) so that this module stays below the
    stage packages that define them; `check(obj, plugin)` returns the object to use (the
    Protocol check is done before it) and raises `UserError` saying what to fix."""

    id: str
    label: str  # as messages say it: "log format"
    group: str
    protocol: str
    check: str | None = None
    docs: str = "docs/plugins.md"


KINDS: dict[str, PluginKind] = {
    k.id: k
    for k in (
        PluginKind(
            "domain",
            "domain",
            "casemill.domains",
            "casemill.domains.base:Domain",
            "casemill.domains.registry:checked_plugin",
            "docs/domains.md",
        ),
        PluginKind(
            "operator",
            "operator",
            "casemill.operators",
            "casemill.generators.framework:Operator",
            "casemill.generators.framework:operator_plugin",
            "docs/operators.md",
        ),
        PluginKind(
            "agent",
            "agent",
            "casemill.agents",
            "casemill.evaluation.agents.factories:AgentFactory",
            docs="docs/agents.md",
        ),
        PluginKind(
            "log_format", "log format", "casemill.log_formats", "casemill.mining.parsers:LogFormat"
        ),
        PluginKind("importer", "importer", "casemill.importers", "casemill.formats:Importer"),
        PluginKind("exporter", "exporter", "casemill.exporters", "casemill.formats:Exporter"),
        PluginKind(
            "metric",
            "metric",
            "casemill.metrics",
            "casemill.evaluation.scoring.plugins:Metric",
            "casemill.evaluation.scoring.plugins:check_metric",
        ),
        PluginKind(
            "gate_check",
            "gate check",
            "casemill.gate_checks",
            "casemill.evaluation.gate_checks:GateCheck",
        ),
    )
}


@dataclass(frozen=True)
class Plugin:
    """One declared or registered plugin: where it comes from, before it is loaded."""

    kind: str
    name: str
    target: str  # the object's dotted path, `module:attr`
    origin: str  # BUILT_IN, REGISTERED or the declaring distribution's name
    entry_point: EntryPoint | None = None

    @property
    def who(self) -> str:
        """How messages name it: `metric 'polite' from package 'x' (casemill.metrics entry
        point polite = x:Polite)`."""
        return f"{KINDS[self.kind].label} {self.name!r} from {self.where}"

    @property
    def where(self) -> str:
        if self.entry_point is None:
            return "register()"
        package = "Casemill" if self.origin == BUILT_IN else f"package {self.origin!r}"
        return f"{package} ({KINDS[self.kind].group} entry point {self.name} = {self.target})"


_REGISTERED: dict[tuple[str, str], tuple[Plugin, Any]] = {}
_LOADED: dict[tuple[str, str], Any] = {}
_ADDED: dict[str, list[str]] = {}  # `added`, by kind


def kind(kind_id: str) -> PluginKind:
    if kind_id not in KINDS:
        raise ValueError(f"unknown plugin kind {kind_id!r}; known: {', '.join(KINDS)}")
    return KINDS[kind_id]


def declared(kind_id: str) -> dict[str, Plugin]:
    """What the installed distributions declare for `kind_id`, by name; registered ones first."""
    out = {name: plugin for (k, name), (plugin, _) in _REGISTERED.items() if k == kind_id}
    for name, plugin in _scan()[kind(kind_id).group][0].items():
        out.setdefault(name, plugin)
    return out


def names(kind_id: str) -> list[str]:
    """The names `get(kind_id, ...)` answers to, sorted (loading none of them)."""
    return sorted(declared(kind_id))


def added(kind_id: str) -> list[str]:
    """The names of `kind_id` that are not Casemill's own (declared by other packages, or
    registered), sorted; kept until the next `register`, `unregister` or `refresh` (the scorer
    asks on every trial)."""
    found = _ADDED.get(kind_id)
    if found is None:
        found = _ADDED[kind_id] = [n for n in names(kind_id) if not is_built_in(kind_id, n)]
    return found


def is_built_in(kind_id: str, name: str) -> bool:
    found = _scan()[kind(kind_id).group][0].get(name)
    return found is not None and found.origin == BUILT_IN


def find(kind_id: str, name: str) -> Any | None:
    """The loaded, checked object called `name`, or None when nothing declares that name; a
    plugin that fails to load or to check is a `UserError` naming its entry point."""
    key = (kind_id, name)
    if key in _REGISTERED:
        return _REGISTERED[key][1]
    if key in _LOADED:
        return _LOADED[key]
    conflict = _scan()[kind(kind_id).group][1].get(name)
    if conflict is not None:
        raise UserError(conflict)
    plugin = declared(kind_id).get(name)
    if plugin is None:
        return None
    _LOADED[key] = obj = _checked(_load(plugin), plugin)
    return obj


def get(kind_id: str, name: str) -> Any:
    """`find`, with a `UserError` naming the known names when `name` is not one."""
    obj = find(kind_id, name)
    if obj is None:
        k = kind(kind_id)
        raise UserError(
            f"unknown {k.label} {name!r}; known: {', '.join(names(kind_id)) or '(none)'} (a "
            f"package adds one under the {k.group!r} entry points: see {k.docs})"
        )
    return obj


def register(kind_id: str, obj: Any, name: str | None = None, *, replace: bool = False) -> Any:
    """Make `obj` known as `name` (default: its `name` attribute) in this process, checked as a
    declared one is; a taken name needs `replace=True`, and a built-in name cannot be taken."""
    name = name if name is not None else getattr(obj, "name", None)
    k = kind(kind_id)
    if not isinstance(name, str) or not name:
        raise UserError(f"{k.label} {obj!r}: it needs a name (a non-empty string)")
    if is_built_in(kind_id, name):
        raise UserError(f"register(): {name!r} is a built-in {k.label}; give yours another name")
    if not replace and name in declared(kind_id):
        raise UserError(
            f"{k.label} {name!r} is registered already; pass replace=True to put {obj!r} in "
            "its place"
        )
    plugin = Plugin(kind_id, name, _dotted(obj), REGISTERED)
    checked = _checked(obj, plugin)
    _REGISTERED[(kind_id, name)] = (plugin, checked)
    _LOADED.pop((kind_id, name), None)
    _ADDED.clear()
    return checked


def unregister(kind_id: str, name: str) -> None:
    """Forget what `register` added as `name` (nothing when it added nothing)."""
    _REGISTERED.pop((kind(kind_id).id, name), None)
    _ADDED.clear()


def refresh() -> None:
    """Read the installed distributions' entry points again, and forget what was loaded from
    them (registered objects stay)."""
    _scan.cache_clear()
    _LOADED.clear()
    _ADDED.clear()


@dataclass(frozen=True)
class Row:
    """One line of `casemill plugins list`."""

    kind: str
    name: str
    origin: str
    target: str
    error: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {
            "kind": self.kind,
            "name": self.name,
            "origin": self.origin,
            "object": self.target,
            "error": self.error,
        }


def rows(kind_ids: list[str] | None = None) -> list[Row]:
    """Every plugin of the kinds asked for (all by default), loaded, with its load error."""
    out = []
    for kind_id in kind_ids or list(KINDS):
        conflicts = _scan()[kind(kind_id).group][1]
        for name in sorted({*names(kind_id), *conflicts}):
            plugin = declared(kind_id).get(name)
            error = None
            try:
                find(kind_id, name)
            except UserError as exc:
                error = str(exc)
            origin = plugin.origin if plugin else "(conflict)"
            out.append(Row(kind_id, name, origin, plugin.target if plugin else "", error))
    return out


@lru_cache(maxsize=1)
def _scan() -> dict[str, tuple[dict[str, Plugin], dict[str, str]]]:
    """Per group: the declared plugins by name, and the names two packages declare (a message
    each, raised when the name is asked for). A name Casemill declares stays Casemill's: another
    package declaring it is ignored, with a warning."""
    out: dict[str, tuple[dict[str, Plugin], dict[str, str]]] = {}
    every = entry_points()  # one pass over the installed distributions, for all the groups
    for k in KINDS.values():
        found: dict[str, Plugin] = {}
        conflicts: dict[str, str] = {}
        for ep in every.select(group=k.group):
            plugin = _plugin(k.id, ep)
            taken = found.get(ep.name)
            if taken is None or taken.target == plugin.target:
                found[ep.name] = taken or plugin
            elif BUILT_IN in (taken.origin, plugin.origin):
                keep, drop = (taken, plugin) if taken.origin == BUILT_IN else (plugin, taken)
                found[ep.name] = keep
                log.warning(
                    "%s declares %s %r, a built-in name: ignored", drop.where, k.label, ep.name
                )
            else:
                conflicts[ep.name] = (
                    f"{k.label} {ep.name!r} is declared twice, by {taken.where} and by "
                    f"{plugin.where}; uninstall one, or rename its entry point"
                )
        for name in conflicts:
            found.pop(name, None)
        out[k.group] = (found, conflicts)
    if not any(p.origin == BUILT_IN for found, _ in out.values() for p in found.values()):
        raise UserError(
            "Casemill's own plugins are not declared in this environment (its installed "
            "metadata is missing or stale): run `uv sync` in the checkout, or `pip install -e .`"
        )
    return out


def _plugin(kind_id: str, ep: EntryPoint) -> Plugin:
    dist = getattr(ep, "dist", None)
    name = dist.name if dist is not None else "an installed package"
    origin = BUILT_IN if name.lower() == _OWN_DISTRIBUTION else name
    return Plugin(kind_id, ep.name, ep.value, origin, ep)


def _load(plugin: Plugin) -> Any:
    ep = plugin.entry_point
    assert ep is not None  # registered plugins are never loaded
    if ep.attr:
        return load_object(ep.module, ep.attr, plugin.who)
    return import_module(ep.module, plugin.who)


def _checked(obj: Any, plugin: Plugin) -> Any:
    """`obj` (a class: made without arguments) as its kind's Protocol describes it, passed
    through the kind's own check; else a `UserError` naming the plugin and what it lacks."""
    k = KINDS[plugin.kind]
    protocol = _resolve(k.protocol)
    if inspect.isclass(obj):
        try:
            obj = obj()
        except Exception as exc:
            raise UserError(f"{plugin.who}: making the {k.label} raised {raised(exc)}") from exc
    if k.check is not None:
        return _resolve(k.check)(obj, plugin)
    missing = lacks(obj, protocol)
    if missing:
        raise UserError(
            f"{plugin.who} is not a {protocol.__name__} ({k.protocol.replace(':', '.')}): it "
            f"lacks {', '.join(missing)}"
        )
    return obj


def lacks(obj: Any, protocol: type) -> list[str]:
    """The members of `protocol` that `obj` does not have (a method: not callable)."""
    missing = []
    for member in protocol_members(protocol):
        if member == "__call__":
            if not callable(obj):
                missing.append("__call__ (it is not callable)")
        elif (
            not hasattr(obj, member)
            or callable(getattr(protocol, member, None))
            and not callable(getattr(obj, member))
        ):
            missing.append(member)
    return missing


def protocol_members(protocol: type) -> list[str]:
    """A Protocol's attributes (annotated) then its methods, in their order of declaration."""
    members: list[str] = []
    for cls in reversed(protocol.__mro__):
        if cls is object or cls.__name__ in ("Protocol", "Generic"):
            continue
        members += [n for n in getattr(cls, "__annotations__", {}) if n not in members]
        members += [
            n
            for n, v in vars(cls).items()
            if callable(v) and (not n.startswith("_") or n == "__call__") and n not in members
        ]
    return members


@cache
def _resolve(dotted: str) -> Callable[..., Any] | Any:
    module, _, attr = dotted.partition(":")
    return load_object(module, attr, f"Casemill's {dotted}")


def _dotted(obj: Any) -> str:
    target = obj if inspect.isclass(obj) or inspect.isfunction(obj) else type(obj)
    return f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', '?')}"
