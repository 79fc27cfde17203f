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

Domains are one kind of Casemill's plugins (`casemill.plugins`): the built-in packs are
declared the same way, in Casemill's own `pyproject.toml`.

`register_domain(pack)` does the same from Python, for a notebook or a script that builds cases
itself. The built-in names (`support`, `tau2-retail`, `airline`, `generic`, `generic:LABEL`) cannot be
taken by another pack.
"""

from __future__ import annotations

from typing import Any

from casemill import plugins
from casemill.domains.base import Domain, GenericDomain
from casemill.errors import UserError
from casemill.loading import raised

GROUP = "casemill.domains"
KIND = "domain"
# what a Domain has (casemill.domains.base.Domain): attributes, then methods
_ATTRIBUTES = ("tool_specs", "read_tools", "write_tools", "has_simulator", "no_replay_reason")
_METHODS = ("sandbox", "state_problems", "reference_problems")


def get_domain(name: str) -> Domain:
    """The domain pack called `name`: a built-in one (`support`, `tau2-retail`, `airline`), one registered
    or declared by an installed package, or `generic` / `generic:LABEL` (no simulator)."""
    if _is_generic(name):
        return GenericDomain(name=name)
    found = plugins.find(KIND, name)
    if found is None:
        raise UserError(
            f"unknown domain {name!r}; known: {', '.join(known_domains())}, generic[:LABEL] "
            f"(a package adds one under the {GROUP!r} entry points: see docs/domains.md)"
        )
    return found


def register_domain(pack: Any, *, replace: bool = False) -> Domain:
    """Make `pack` (a `Domain`) known by its name to `get_domain` in this process; a name that
    is taken needs `replace=True`, and a built-in name cannot be taken."""
    name = getattr(pack, "name", None)
    if not isinstance(name, str) or not name:
        raise UserError(f"domain pack {pack!r}: it needs a name (a non-empty string)")
    if _is_generic(name) or plugins.is_built_in(KIND, name):
        raise UserError(
            f"register_domain: {name!r} is a built-in domain; give the pack another name"
        )
    return plugins.register(KIND, pack, name, replace=replace)


def known_domains() -> list[str]:
    """The names `get_domain` answers to, but the generic ones: built in, registered, declared."""
    return plugins.names(KIND)


def _is_generic(name: str) -> bool:
    return name == "generic" or name.startswith("generic:")


def checked_plugin(pack: Any, plugin: plugins.Plugin) -> Domain:
    """`pack` (a function is called to make it), if it has what a `Domain` has and is called
    as its entry point; else a `UserError` saying what it lacks (the `casemill.plugins` check
    of the domain kind)."""
    if callable(pack) and not _is_domain(pack):
        try:
            pack = pack()
        except Exception as exc:
            raise UserError(f"{plugin.who}: making the pack raised {raised(exc)}") from exc
    name, origin = plugin.name, plugin.where
    if _is_generic(name):
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


def _is_domain(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("name", *_ATTRIBUTES, *_METHODS))
