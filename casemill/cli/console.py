"""Rich consoles for the CLI edge (library code logs; only the CLI prints).

Emoji codes are off: what the CLI prints carries names users chose (agent specs such as
`openai:m:`, case ids, file names), and Rich would show `:m:` in them as an emoji."""

from rich.console import Console

console = Console(highlight=False, emoji=False)
err_console = Console(stderr=True, highlight=False, emoji=False)
