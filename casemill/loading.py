"""Importing a user's own code (a `python:` agent's module, a domain pack a package declares)
and, when that fails, saying whose fault it is: the module is not on the path, a package it
imports is missing, it does not compile, or its own code raised (with the file and line)."""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from types import ModuleType
from typing import Any

from casemill.errors import UserError


def import_module(module_name: str, who: str, from_cwd: bool = False) -> ModuleType:
    """`module_name` imported; a `UserError` starting with `who` (what was being loaded)
    otherwise. With `from_cwd`, the working folder is on the path too, after everything else
    (as `python -m` has it, but behind installed packages, which a file of the same name there
    does not shadow): `casemill eval --agent python:my_agent:run` run beside `my_agent.py`."""
    if from_cwd:
        on_cwd_path()
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            where = f"in the working folder ({os.getcwd()}) or " if from_cwd else ""
            raise UserError(
                f"{who}: cannot import module {module_name!r} ({exc}); is it {where}on PYTHONPATH?"
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


def on_cwd_path() -> None:
    """The working folder appended to `sys.path` unless it is there already (`""` or itself)."""
    cwd = os.getcwd()
    if not any(entry in ("", ".", cwd) for entry in sys.path):
        sys.path.append(cwd)


def load_object(module_name: str, attr: str, who: str, from_cwd: bool = False) -> Any:
    """`module_name`'s `attr` (dotted: `Class.method`), imported as `import_module` does."""
    obj: Any = import_module(module_name, who, from_cwd)
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
