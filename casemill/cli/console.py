"""Rich consoles for the CLI edge (library code logs; only the CLI prints).

Emoji codes are off: what the CLI prints carries names users chose (agent specs such as
`openai:m:`, case ids, file names), and Rich would show `:m:` in them as an emoji."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console

console = Console(highlight=False, emoji=False)
err_console = Console(stderr=True, highlight=False, emoji=False)


@contextmanager
def progress_bar(label: str, enabled: bool = True) -> Iterator[Callable[[int, int], None] | None]:
    """A bar on stderr (`label`, done of total, elapsed time), gone when done; yields its
    `progress(done, total)` callback, or None when not `enabled` (`--json`)."""
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True) as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)
