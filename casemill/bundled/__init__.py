"""The data Casemill ships inside its package, read with `importlib.resources` so that an
installed wheel works on its own: the JSON Schemas (`schemas/`), the default gates (`gates/`),
and what `casemill demo` starts from (the seeds `seeds/`, the sample support log `samples/`, the
corpus `corpus/`).

In a checkout each name here is a symlink to the project's top-level folder of that name (the
folders the project is known by stay where they are); the wheel carries copies of the folders
(pyproject.toml, `[tool.hatch.build.targets.wheel.force-include]`).

    >>> from casemill.bundled import data_path
    >>> data_path("gates", "default.toml").read_text().startswith("#")
    True
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from casemill.errors import UserError

NAMES = ("corpus", "gates", "samples", "schemas", "seeds")


def data_path(name: str, *parts: str) -> Path:
    """The path of bundled data `name` (one of `NAMES`), or of `parts` inside it, symlinks
    resolved (in a checkout, the project's top-level folder). A `ValueError` for another name."""
    if name not in NAMES:
        raise ValueError(f"{name!r} is not bundled with Casemill; bundled: {', '.join(NAMES)}")
    root = files("casemill.bundled")
    if not isinstance(root, Path):  # a zip import: no folder to hand to the stages
        raise UserError(
            "Casemill's bundled data is not on disk (imported from a zip file?): install "
            "Casemill with pip or uv, which unpack the wheel"
        )
    return root.joinpath(name, *parts).resolve()
