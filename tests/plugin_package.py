"""A package outside Casemill that adds plugins, installed for a test the way pip installs one:
its module and a `*.dist-info` folder (METADATA, entry_points.txt) in a folder put on
`sys.path`, which is where `importlib.metadata` finds installed distributions."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from casemill import plugins

MODULE = "cm_extras"
DISTRIBUTION = "casemill-extras"

SOURCE = textwrap.dedent(
    '''
    """Casemill extras: a metric, an operator, a gate check, an agent transport, a log format."""

    from casemill.case.model import derive
    from casemill.evaluation.agents.base import AgentReply
    from casemill.evaluation.gate_checks import CheckResult
    from casemill.generators import operator


    class ReplyWords:
        """Words in the agent's final reply."""

        name = "reply_words"
        version = "1"
        higher_is_better = False
        unit = "count"

        def __call__(self, trial):
            return len((trial.trajectory.final_reply or "").split())


    @operator(
        kind="noise",
        name="thanks_suffix",
        version="1",
        label_rule="expected unchanged: a closing courtesy is invariant noise",
    )
    def thanks_suffix(case, rng, text="Thanks a lot!"):
        """Ends the first customer turn with a courtesy."""
        turns = list(case.conversation)
        first = next(i for i, t in enumerate(turns) if t.role == "customer")
        turns[first] = turns[first].model_copy(update={"content": f"{turns[first].content} {text}"})
        return [derive(case, conversation=tuple(turns))]


    class MostWords:
        """No case's mean of the rule's metric above args.limit."""

        name = "most"

        def __call__(self, s):
            limit = s.rule.args["limit"]
            over = tuple(i for i in s.case_ids if (s.per_case[i].get(s.rule.metric) or 0) > limit)
            top = max((s.per_case[i].get(s.rule.metric) or 0 for i in s.case_ids), default=None)
            return CheckResult(not over, top, f"{len(over)} cases over {limit}", over)


    class Echo:
        name = "echo"
        fingerprint = "echo-1"

        def __init__(self, text):
            self.text = text

        async def run(self, episode):
            return AgentReply(self.text)


    def echo(rest, *, spec, settings, temperature):
        return Echo(rest)


    class Lines:
        """`role| text` a line, a blank line between conversations."""

        def parse(self, path, *, max_turns, progress=None, **options):
            from casemill.mining.model import Conversation, Message

            blocks = path.read_text().split("\\n\\n")
            for number, block in enumerate(blocks, 1):
                pairs = [line.split("| ", 1) for line in block.splitlines() if line.strip()]
                messages = [Message(role=r, content=t) for r, t in pairs][:max_turns]
                if messages:
                    yield Conversation(
                        id=f"c{number}", messages=messages, file=str(path), line=number,
                        format="lines", total_messages=len(pairs),
                    )


    def export_ids(cases, path):
        """One case id a line."""
        from casemill.formats import ExportResult

        ids = [c.id for c in cases]
        open(path, "w").write("".join(i + "\\n" for i in ids))
        return ExportResult(format="ids", path=str(path), written=len(ids))


    def import_cases(path, label=None):
        """Casemill's own JSONL, tagged with `label`."""
        from casemill.case.model import Case
        from casemill.formats import ImportResult

        cases = [Case.model_validate_json(line) for line in open(path)]
        return ImportResult(format="cases", source=str(path), read=len(cases), cases=tuple(cases))


    class NoVersion:
        name = "no_version"

        def __call__(self, trial):
            return 1.0


    def plain(case, rng):
        return []
    '''
)

ENTRY_POINTS = {
    "casemill.metrics": {"reply_words": f"{MODULE}:ReplyWords"},
    "casemill.operators": {"thanks_suffix": f"{MODULE}:thanks_suffix"},
    "casemill.gate_checks": {"most": f"{MODULE}:MostWords"},
    "casemill.agents": {"echo": f"{MODULE}:echo"},
    "casemill.log_formats": {"lines": f"{MODULE}:Lines"},
    "casemill.exporters": {"ids": f"{MODULE}:export_ids"},
    "casemill.importers": {"cases": f"{MODULE}:import_cases"},
}


def install(
    folder: Path,
    entry_points: dict[str, dict[str, str]] | None = None,
    name: str = DISTRIBUTION,
) -> Path:
    """Write the module and a distribution `name` declaring `entry_points` into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{MODULE}.py").write_text(SOURCE)
    info = folder / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    groups = entry_points if entry_points is not None else ENTRY_POINTS
    text = "".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
        for group, eps in groups.items()
    )
    (info / "entry_points.txt").write_text(text)
    return folder


def forget() -> None:
    """Undo what an installed package left in this process: its module, its operator, the
    registry's caches."""
    from casemill.generators.framework import REGISTRY

    sys.modules.pop(MODULE, None)
    REGISTRY.pop("thanks_suffix", None)
    plugins.refresh()
