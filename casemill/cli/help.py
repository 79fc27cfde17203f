"""How `--help` reads: flags show no value, arguments and repeatable options show the type of one
value, and docstrings wrapped in the source reflow to the terminal's width.

Typer (0.26 and later vendor Click as `typer._click`, so the installed click plays no part) puts
the result of `display_type_rich()` beside every parameter in its Rich help panels, flags
included (`--json <bool>`, `--help <bool>`, as if they took a value), and labels a list with its
Python annotation (`<list[Path]>`). It also keeps the single line breaks of a command's
docstring in every paragraph but the first (and in the first, in a group's command list). It
builds its parameter objects itself with no class hook, so the commands and groups made through
`Typer` below give their parameters the display methods of `_Argument` and `_Option`.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import re
from typing import Any, get_args

import typer
from typer import _click
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

_LIST_ITEM = re.compile(r"\s|[-*] |\d+[.)] ")


def reflow(text: str | None) -> str | None:
    """`text` with the line breaks inside each paragraph replaced by spaces, so the terminal
    wraps it. Paragraphs are separated by blank lines; one whose later lines are indented or
    start a list item, or that starts with Click's `\\b` marker, keeps its lines. What follows a
    `\\f` line (text for the source reader only) is dropped."""
    if text is None:
        return None
    text = text.expandtabs().partition("\f")[0]
    paragraphs = re.split(r"\n\s*\n", inspect.cleandoc(text).strip())
    return "\n\n".join(_reflow_paragraph(p) for p in paragraphs)


def _reflow_paragraph(paragraph: str) -> str:
    if paragraph.startswith("\b"):
        return paragraph.removeprefix("\b").lstrip("\n")
    first, *rest = paragraph.split("\n")
    if any(_LIST_ITEM.match(line) for line in rest):
        return paragraph
    return " ".join(line.strip() for line in [first, *rest])


def _element_label(param: TyperArgument | TyperOption, ctx: _click.Context) -> str:
    """The help label of one value of a list parameter (`<path>` for `list[Path]`)."""
    one = copy.copy(param)
    (element,) = get_args(param.type_descriptor.annotation)
    one.type_descriptor = dataclasses.replace(param.type_descriptor, annotation=element)
    return TyperArgument.display_type(one, ctx)


class _Argument(TyperArgument):
    """An argument labelled by the type of one value; in the usage line NAME, NAME... or
    [NAME] (Typer writes `{name}`, which reads as a set of choices)."""

    def display_type_rich(self, ctx: _click.Context) -> str | None:
        if self.type_descriptor.is_list:
            return _element_label(self, ctx)
        return super().display_type_rich(ctx)

    def _usage_display_name(self) -> str:
        name = self.metavar or (self.name or "").upper()
        if self.nargs != 1:
            name += "..."
        return name if self.required else f"[{name}]"


class _Option(TyperOption):
    """A flag shows no value; a repeatable option shows the type of the one value each use
    takes."""

    def display_type_rich(self, ctx: _click.Context) -> str | None:
        if self.metavar is not None:
            return self.metavar
        if self.is_flag:
            return None
        if self.multiple and self.type_descriptor.is_list:
            return _element_label(self, ctx)
        return super().display_type_rich(ctx)


def _shown(param: _click.Parameter) -> _click.Parameter:
    """`param` with the display methods above (same data: only the class changes)."""
    if type(param) is TyperArgument:
        param.__class__ = _Argument
    elif type(param) is TyperOption:
        param.__class__ = _Option
    return param


class _HelpMixin:
    """Reflowed help text and parameters shown as above."""

    params: list[_click.Parameter]

    def _tidy_help(self) -> None:
        self.help = reflow(self.help)  # type: ignore[attr-defined]
        self.short_help = reflow(self.short_help)  # type: ignore[attr-defined]
        self.params = [_shown(p) for p in self.params]

    def get_help_option(self, ctx: _click.Context) -> TyperOption | None:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        return None if option is None else _shown(option)


class HelpCommand(_HelpMixin, TyperCommand):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tidy_help()


class HelpGroup(_HelpMixin, TyperGroup):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tidy_help()


class Typer(typer.Typer):
    """`typer.Typer` whose groups and commands are `HelpGroup` and `HelpCommand`: every Typer
    of the CLI is made with this one."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cls", HelpGroup)
        super().__init__(**kwargs)

    def command(self, name: str | None = None, **kwargs: Any) -> Any:
        kwargs.setdefault("cls", HelpCommand)
        return super().command(name, **kwargs)
