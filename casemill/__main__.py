"""`python -m casemill` runs the command line, as the `casemill` script does."""

from casemill.cli import main

main()
