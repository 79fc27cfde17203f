"""The operator framework: registration, per-candidate randomness, provenance stamping.

An operator is a function `(case, rng, **args) -> list[Case]` registered with `@operator` and
declared under the `casemill.operators` entry points (Casemill's own in its `pyproject.toml`, a
user's in theirs: see docs/plugins.md); `get_operator` imports its module when first asked. It
builds its new cases with `derive()` (never by mutation) and leaves lineage to the framework:
`apply_operator` resolves the arguments (defaults included), gives the operator a `random.Random`
derived from (global seed, parent id, operator name, index) with a stable hash, and stamps every
returned case with provenance (origin `generated`, parents, the operator chain, the seed) and a
pending review. Re-validation happens in `casemill.generators.quality`.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from casemill import plugins
from casemill.case.model import Case, OperatorStep, Provenance, Review
from casemill.errors import UserError

log = logging.getLogger(__name__)
PLUGIN_KIND = "operator"

KINDS: tuple[str, ...] = (
    "noise",
    "entity_swap",
    "outcome_flip",
    "adversarial",
    "fault",
    "interpolation",
)

OperatorFn = Callable[..., list[Case]]
INJECTED = frozenset({"endpoint", "traces"})  # given by the framework to LLM-backed operators


class NotApplicable(Exception):  # noqa: N818 - a signal, not an error
    """Raised by an operator when the case has nothing it can work on (counted, not rejected)."""


class Rejected(Exception):  # noqa: N818 - a signal, recorded as a rejection
    """Raised by an operator whose attempt produced nothing usable (e.g. an off-task LLM reply)."""

    def __init__(
        self,
        reason: str,
        detail: str = "",
        *,
        model: str | None = None,
        prompt_hash: str | None = None,
    ):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.model = model
        self.prompt_hash = prompt_hash


@dataclass(frozen=True)
class LLMTrace:
    """What an LLM-backed operator records about its call (lands in the operator step)."""

    model: str
    prompt_hash: str


@dataclass(frozen=True)
class OperatorSpec:
    kind: str
    name: str
    version: str
    label_rule: str
    fn: OperatorFn
    defaults: dict[str, Any] = field(default_factory=dict)
    needs_llm: bool = False
    doc: str = ""

    def resolve(self, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """The operator's arguments with defaults filled in; unknown names are a `UserError`
        naming the operator, the unknown names and the accepted ones (`endpoint` and `traces`
        too: the framework passes those to LLM-backed operators, a caller does not)."""
        args = dict(args or {})
        unknown = sorted(set(args) - set(self.defaults))
        if unknown:
            raise UserError(self.unknown_args_message(unknown))
        for name, value in args.items():
            self._check_type(name, value)
        return {**self.defaults, **args}

    def _check_type(self, name: str, value: Any) -> None:
        """An argument of the type of its default (an int where a float is the default; never
        a bool for a number), else a `UserError` naming both: a wrong type would fail every
        attempt of the run, one by one, or be taken silently (`"high"` as a probability)."""
        default = self.defaults[name]
        if default is None:
            return
        want = float if type(default) is float else type(default)
        ok = isinstance(value, int | float) if want is float else isinstance(value, want)
        if isinstance(value, bool) and want is not bool:
            ok = False
        if not ok:
            raise UserError(
                f"operator {self.name!r} argument {name!r} must be "
                f"{'a number' if want is float else 'of type ' + want.__name__} like its "
                f"default {default!r}, not {value!r} ({type(value).__name__})"
            )

    def unknown_args_message(self, unknown: list[str]) -> str:
        names = ", ".join(repr(name) for name in unknown)
        accepted = ", ".join(f"{k} (default {v!r})" for k, v in sorted(self.defaults.items()))
        message = (
            f"operator {self.name!r} takes no argument{'s' if len(unknown) > 1 else ''} {names}; "
            + (f"accepted: {accepted}" if accepted else "it takes no arguments at all")
            + " (`casemill ops list --json` shows every operator's arguments)"
        )
        injected = sorted(set(unknown) & INJECTED)
        if injected:
            message += f"; {', '.join(injected)}: given by the framework, not by the caller"
        return message

    @functools.cached_property
    def default_step(self) -> OperatorStep:
        """The lineage step of a run with the default arguments and no LLM (shared: frozen)."""
        return OperatorStep(
            kind=self.kind, name=self.name, version=self.version, args=self.resolve()
        )

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "version": self.version,
            "label_rule": self.label_rule,
            "needs_llm": self.needs_llm,
            "defaults": self.defaults,
            "doc": self.doc,
        }


REGISTRY: dict[str, OperatorSpec] = {}


def operator(
    *, kind: str, name: str, version: str, label_rule: str, needs_llm: bool = False
) -> Callable[[OperatorFn], OperatorFn]:
    """Register `fn(case, rng, **args) -> list[Case]` as an operator."""
    if kind not in KINDS:
        raise ValueError(f"unknown operator kind {kind!r}; known: {KINDS}")
    for field_name, value in (("name", name), ("version", version), ("label_rule", label_rule)):
        if not isinstance(value, str) or not value.strip():
            what = "empty" if isinstance(value, str) else f"{value!r}, not a string"
            raise ValueError(f"operator {name!r}: {field_name} is {what}; {_DECLARE[field_name]}")

    def wrap(fn: OperatorFn) -> OperatorFn:
        taken = REGISTRY.get(name)
        if taken is not None and _qualname(taken.fn) != _qualname(fn):
            raise ValueError(
                f"operator name {name!r} is registered twice, by {_qualname(taken.fn)} and by "
                f"{_qualname(fn)}; operator names are unique (`casemill ops list` shows the "
                "names taken): rename yours"
            )
        params = list(inspect.signature(fn).parameters.values())[2:]
        defaults = {
            p.name: p.default
            for p in params
            if p.default is not inspect.Parameter.empty and p.name not in INJECTED
        }
        doc = (inspect.getdoc(fn) or "").split("\n\n")[0].replace("\n", " ")
        REGISTRY[name] = OperatorSpec(kind, name, version, label_rule, fn, defaults, needs_llm, doc)
        return fn

    return wrap


_DECLARE = {
    "name": "give the operator the name `casemill expand --operators` will know it by",
    "version": 'give it a version ("1") to bump when its old outputs stop being comparable',
    "label_rule": "declare what the operator does to the expected state, e.g. "
    'label_rule="expected unchanged: casing is invariant noise" (see docs/operators.md)',
}


def _qualname(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def get_operator(name: str) -> OperatorSpec:
    """The operator called `name`: one registered by `@operator` in this process, or one an
    installed package (Casemill included) declares under the `casemill.operators` entry points."""
    found = REGISTRY.get(name) or plugins.find(PLUGIN_KIND, name)
    if found is None:
        raise UserError(f"unknown operator {name!r}; run `casemill ops list` to see them")
    return found


def all_operators() -> list[OperatorSpec]:
    """Every operator, built-in, declared or registered, by kind then name. One that fails to
    load is left out with a warning (`casemill plugins list` shows its error)."""
    for name in plugins.names(PLUGIN_KIND):
        try:
            plugins.find(PLUGIN_KIND, name)
        except UserError as exc:
            log.warning("operator %r left out: %s", name, exc)
    return sorted(REGISTRY.values(), key=lambda s: (KINDS.index(s.kind), s.name))


class Operator(Protocol):
    """What a `casemill.operators` entry point names: a function `(case, rng, **args) ->
    list[Case]` registered with `@operator` (or the `OperatorSpec` it made)."""

    def __call__(self, case: Case, rng: random.Random, /, **args: Any) -> list[Case]: ...


def operator_plugin(obj: Any, plugin: Any) -> OperatorSpec:
    """The `OperatorSpec` of an entry point's object (the `casemill.plugins` check of the
    operator kind): the function must be registered by `@operator` under the entry point's name."""
    spec = obj if isinstance(obj, OperatorSpec) else _spec_of(obj)
    if spec is None:
        raise UserError(
            f"{plugin.who} is not an operator: decorate the function with "
            "@casemill.generators.operator(kind=..., name=..., version=..., label_rule=...) "
            "(see docs/operators.md)"
        )
    if spec.name != plugin.name:
        raise UserError(
            f"{plugin.who} is registered as {spec.name!r}; the two must be the same (chains and "
            "provenance name the operator by it)"
        )
    return spec


def _spec_of(fn: Any) -> OperatorSpec | None:
    return next((s for s in REGISTRY.values() if s.fn is fn), None)


def stable_int(*parts: Any) -> int:
    """A 64-bit integer from `parts`, the same on every machine and process."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def candidate_rng(seed: int, parent_id: str, op_name: str, index: int) -> random.Random:
    return random.Random(stable_int(seed, parent_id, op_name, index))


PENDING = Review()  # the review of every new candidate (frozen, so one is shared)


def stamp(child: Case, parent: Case, step: OperatorStep, seed: int) -> Case:
    """`child` with lineage: parents, the operator chain, the seed; review reset to pending.

    Provenance and review are not part of a case's meaning, so the content id stays valid."""
    prov = Provenance(
        origin="generated",
        parents=(parent.id, *parent.provenance.parents),
        operators=(*parent.provenance.operators, step),
        seed=seed,
        source=parent.provenance.source,
    )
    return child.model_copy(update={"provenance": prov, "review": PENDING})


def apply_operator(
    spec: OperatorSpec,
    case: Case,
    *,
    seed: int,
    index: int,
    args: dict[str, Any] | None = None,
    endpoint: Any = None,
) -> list[Case]:
    """Run one operator on one case; raises `NotApplicable` or whatever the operator raises."""
    resolved = spec.resolve(args)
    rng = candidate_rng(seed, case.id, spec.name, index)
    traces: list[LLMTrace] = []
    call_args = dict(resolved)
    if spec.needs_llm:
        call_args["endpoint"] = endpoint
        call_args["traces"] = traces
    out = spec.fn(case, rng, **call_args)
    trace = traces[-1] if traces else None
    if trace is None and not args:
        step = spec.default_step
    else:
        step = OperatorStep(
            kind=spec.kind,
            name=spec.name,
            version=spec.version,
            args=resolved,
            model=trace.model if trace else None,
            prompt_hash=trace.prompt_hash if trace else None,
        )
    return [stamp(child, case, step, seed) for child in out if child.id != case.id]
