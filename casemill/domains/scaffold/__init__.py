"""A new domain pack's skeleton (`casemill domain new NAME`): an installable package whose pack
has tools, a sandbox, a policy rule with flips and the whole domain contract, two seeds (one
write the policy allows, one it refuses) and a test that validates and expands them.

The skeleton models a bookings domain (customers and bookings; cancel or move a booking unless
it is checked in or too close to its date); docs/domains.md walks through filling it in. The
templates beside this module are the files written, with `{{name}}` (the pack's name, which is
also its package and its domain) and `{{Name}}` (its class-name prefix) filled in.
"""

from __future__ import annotations

import importlib.util
import keyword
import re
import sys
from importlib import resources
from pathlib import Path

from casemill.domains.registry import known_domains
from casemill.errors import UserError

# template -> the file written, relative to the pack's folder
FILES = {
    "pyproject.toml.tmpl": "pyproject.toml",
    "package.py.tmpl": "{{name}}/__init__.py",
    "tools.json.tmpl": "{{name}}/tools.json",
    "seeds.jsonl.tmpl": "seeds/{{name}}.jsonl",
    "test_pack.py.tmpl": "tests/test_{{name}}.py",
}
NAME_SHAPE = re.compile(r"[a-z][a-z0-9_]*")
# names the skeleton's own folders or Casemill's package use (the domains' are asked for)
TAKEN = frozenset({"casemill", "generic", "tests", "seeds"})


def check_name(name: str) -> None:
    """A `UserError` saying what to change unless `name` can be a pack's name, package and
    domain: lower-case letters, digits and underscores, a letter first, no Python keyword, no
    name Casemill or Python's standard library uses, no module already importable (the package
    would shadow it, or it is this pack already installed)."""
    _check_shape(name)
    if name in TAKEN or name in known_domains() or name in sys.stdlib_module_names:
        raise UserError(f"pack name {name!r} is taken by Casemill or Python; choose another")
    if _importable(name):
        raise UserError(
            f"pack name {name!r}: a module of that name is already importable here, and the "
            "new package would shadow it (or it is the pack already installed); choose another"
        )


def _check_shape(name: str) -> None:
    if not NAME_SHAPE.fullmatch(name) or keyword.iskeyword(name):
        raise UserError(
            f"pack name {name!r}: use lower-case letters, digits and underscores, starting with "
            "a letter, not a Python keyword (it names the package and the domain), e.g. bookings"
        )


def _importable(name: str) -> bool:
    """Whether a module or regular package `name` is importable (a folder alone is not)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin is not None


def render(name: str) -> dict[str, str]:
    """The skeleton's files for the pack `name`: relative path -> text."""
    fill = {"{{name}}": name, "{{Name}}": "".join(p.title() for p in name.split("_"))}
    here = resources.files(__package__).joinpath("templates")
    out = {}
    for template, target in FILES.items():
        text = here.joinpath(template).read_text(encoding="utf-8")
        for key, value in fill.items():
            text, target = text.replace(key, value), target.replace(key, value)
        out[target] = text
    return out


def write_skeleton(name: str, folder: Path) -> list[Path]:
    """Write the skeleton of the pack `name` into `folder` (made if missing; refused unless
    empty) and return the files written."""
    _check_shape(name)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UserError(
            f"{folder} is not an empty folder: the skeleton goes into a new or empty one "
            "(--dir PATH names another)"
        )
    check_name(name)
    written = []
    for relative, text in render(name).items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
