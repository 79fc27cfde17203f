"""Rich consoles for the CLI edge (library code logs; only the CLI prints)."""

from rich.console import Console

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)
