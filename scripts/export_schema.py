"""Write the JSON Schemas generated from the code into `schemas/`:

- `schemas/case.schema.json`: the case model (JSON Schema Draft 2020-12);
- `schemas/support.tools.json`: the support domain's tool specifications.

Run `uv run python scripts/export_schema.py` after changing the case model or the tools;
`--check` exits 1 (and names the stale files) instead of writing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from casemill.domains import get_domain
from casemill.validation.schema import SCHEMAS_DIR, case_json_schema, dump_schema, tools_document


def documents() -> dict[Path, str]:
    support = get_domain("support")
    return {
        SCHEMAS_DIR / "case.schema.json": dump_schema(case_json_schema()),
        SCHEMAS_DIR / "support.tools.json": dump_schema(
            tools_document(support.name, support.tool_specs)
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a file is out of date")
    args = parser.parse_args(argv)
    stale = []
    for path, text in documents().items():
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            sys.stdout.write(f"wrote {path}\n")
    if args.check and stale:
        names = ", ".join(str(p) for p in stale)
        sys.stderr.write(f"out of date: {names}; run: uv run python scripts/export_schema.py\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
