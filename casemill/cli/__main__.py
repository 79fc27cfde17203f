"""`python -m casemill.cli` runs the CLI (what the console script `casemill` does)."""

from casemill.cli import main

main()
