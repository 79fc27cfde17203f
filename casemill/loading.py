"""Importing a user's own code (a `python:` agent's module, a domain pack a package declares)
and, when that fails, saying whose fault it is: the module is not on the path, a package it
imports is missing, it does not compile, or its own code raised (with the file and line)."""

from __future__ import annotations

import importlib
import traceback
from types import ModuleType
from typing import Any

from casemill.errors import UserError


def import_module(module_name: str, who: str) -> ModuleType:
    """`module_name` imported; a `UserError` starting with `who` (what was being loaded)
    otherwise."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise UserError(
                f"{who}: cannot import module {module_name!r} ({exc}); is it on PYTHONPATH?"
            ) from exc
        raise UserError(
            f"{who}: module {module_name!r} was found, but importing it failed: {exc}; install "
            f"the package that provides {missing!r} in the environment Casemill runs in"
        ) from exc
    except SyntaxError as exc:
        raise UserError(
            f"{who}: module {module_name!r} does not compile: "
            f"{exc.filename}:{exc.lineno}: {exc.msg}"
        ) from exc
    except Exception as exc:
        raise UserError(f"{who}: importing module {module_name!r} raised {raised(exc)}") from exc


def load_object(module_name: str, attr: str, who: str) -> Any:
    """`module_name`'s `attr` (dotted: `Class.method`), imported as `import_module` does."""
    obj: Any = import_module(module_name, who)
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UserError(f"{who}: module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def raised(exc: BaseException) -> str:
    """`Type: message (at FILE:LINE)`, the innermost frame of the traceback outside importlib."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "importlib" not in f.filename]
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"
