"""Where domain packs come from: the built-in ones, the packs other installed packages declare,
and packs registered at run time.

A package that ships a domain pack (a team's own agent repository, say) declares it under the
`casemill.domains` entry-point group of its `pyproject.toml`:

    [project.entry-points."casemill.domains"]
    bookings = "my_agent.bookings:BookingsDomain"

The entry point's name is the domain's name, the `domain` its cases hold; its object is a
`Domain` (an instance, or a class or function that makes one without arguments). Once the
package is installed in the environment Casemill runs in (`uv pip install -e .`), every command
and flow knows the domain: validation replays its cases on its sandbox, evaluation scores their
final state. A pack is loaded the first time it is asked for; one that fails to load, is not a
`Domain` or is named otherwise than its entry point is a `UserError` saying what to fix.

`register_domain(pack)` does the same from Python, for a notebook or a script that builds cases
itself. The built-in names (`support`, `tau2-retail`, `generic`, `generic:LABEL`) cannot be
taken by another pack.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from casemill.domains.base import Domain, GenericDomain
from casemill.domains.support import SupportDomain
from casemill.domains.tau2_retail import Tau2RetailDomain
from casemill.errors import UserError
from casemill.loading import import_module, load_object, raised

log = logging.getLogger(__name__)

GROUP = "casemill.domains"
_BUILT_IN: dict[str, Domain] = {d.name: d for d in (SupportDomain(), Tau2RetailDomain())}
_REGISTERED: dict[str, Domain] = {}  # by register_domain, and entry points once loaded
# what a Domain has (casemill.domains.base.Domain): attributes, then methods
_ATTRIBUTES = ("tool_specs", "read_tools", "write_tools", "has_simulator", "no_replay_reason")
_METHODS = ("sandbox", "state_problems", "reference_problems")


def get_domain(name: str) -> Domain:
    """The domain pack called `name`: a built-in one (`support`, `tau2-retail`), one registered
    or declared by an installed package, or `generic` / `generic:LABEL` (no simulator)."""
    found = _BUILT_IN.get(name) or _REGISTERED.get(name)
    if found is not None:
        return found
    if name == "generic" or name.startswith("generic:"):
        return GenericDomain(name=name)
    declared = _declared().get(name)
    if declared is None:
        raise UserError(
            f"unknown domain {name!r}; known: {', '.join(known_domains())}, generic[:LABEL] "
            f"(a package adds one under the {GROUP!r} entry points: see docs/domains.md)"
        )
    pack = _checked(_load(declared), name, _origin(declared))
    _REGISTERED[name] = pack
    return pack


def register_domain(pack: Any, *, replace: bool = False) -> Domain:
    """Make `pack` (a `Domain`) known by its name to `get_domain` in this process; a name that
    is taken needs `replace=True`, and a built-in name cannot be taken."""
    name = getattr(pack, "name", None)
    if not isinstance(name, str) or not name:
        raise UserError(f"domain pack {pack!r}: it needs a name (a non-empty string)")
    if not replace and (name in _REGISTERED or name in _declared()):
        raise UserError(
            f"domain {name!r} is registered already; pass replace=True to put {pack!r} in its place"
        )
    _REGISTERED[name] = _checked(pack, name, "register_domain")
    return _REGISTERED[name]


def known_domains() -> list[str]:
    """The names `get_domain` answers to, but the generic ones: built in, registered, declared."""
    return sorted({*_BUILT_IN, *_REGISTERED, *_declared()})


def _is_reserved(name: str) -> bool:
    return name in _BUILT_IN or name == "generic" or name.startswith("generic:")


@lru_cache(maxsize=1)
def _declared() -> dict[str, EntryPoint]:
    """The packs installed packages declare, by name (read once a process). A name two
    packages declare is refused when asked for; a built-in name is ignored, with a warning."""
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=GROUP):
        if _is_reserved(ep.name):
            log.warning("%s declares domain %r, a built-in name: ignored", _origin(ep), ep.name)
        elif ep.name in found and found[ep.name].value != ep.value:
            raise UserError(
                f"domain {ep.name!r} is declared twice, by {_origin(found[ep.name])} and by "
                f"{_origin(ep)}; uninstall one, or rename its entry point"
            )
        else:
            found[ep.name] = ep
    return found


def _origin(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    package = f"package {dist.name!r}" if dist is not None else "an installed package"
    return f"{package} ({GROUP} entry point {ep.name} = {ep.value})"


def _load(ep: EntryPoint) -> Any:
    """The entry point's object, called when it is a class or a function."""
    who = f"domain {ep.name!r} from {_origin(ep)}"
    obj = load_object(ep.module, ep.attr, who) if ep.attr else import_module(ep.module, who)
    if isinstance(obj, type) or (callable(obj) and not _is_domain(obj)):
        try:
            obj = obj()
        except Exception as exc:
            raise UserError(f"{who}: making the pack raised {raised(exc)}") from exc
    return obj


def _is_domain(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("name", *_ATTRIBUTES, *_METHODS))


def _checked(pack: Any, name: str, origin: str) -> Domain:
    """`pack`, if it has what a `Domain` has and is called `name`; else what it lacks."""
    if _is_reserved(name):
        raise UserError(f"{origin}: {name!r} is a built-in domain; give the pack another name")
    lacks = [a for a in ("name", *_ATTRIBUTES) if not hasattr(pack, a)]
    lacks += [m for m in _METHODS if not callable(getattr(pack, m, None))]
    if lacks:
        raise UserError(
            f"domain {name!r} from {origin} is not a Domain (casemill.domains.base.Domain): it "
            f"lacks {', '.join(lacks)}"
        )
    if pack.name != name:
        raise UserError(
            f"domain {name!r} from {origin} calls itself {pack.name!r}; the two must be the same "
            "(cases name their domain by it)"
        )
    return pack
