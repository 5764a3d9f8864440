"""Answering the input a task asks for: from a file (``--inputs FILE.json``) or by asking on
the terminal (``--inputs interactive``). Without ``--inputs`` nothing is answered, and the
client declares neither elicitation nor sampling."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .._drivers import driver_for
from .._exceptions import DecodeError, RPCError, UsageError
from .._generation import Generation
from ..inputs import ElicitationHandler, InputContext, InputRouter, SamplingHandler
from ..journal import SharedJournal
from ..models import (
    ClientCapabilities,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    SamplingCapability,
    TextContent,
)
from ..wire import decode
from ._output import Output
from ._safe import for_terminal

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["Answering", "FileAnswers", "InteractiveAnswers", "make_answering"]

ELICIT = "elicitation/create"
SAMPLE = "sampling/createMessage"
ANY = "*"
MODEL = "mcp-tasks-cli"
T = TypeVar("T")

Answer = ElicitResult | CreateMessageResult


def _read_answer(key: str, raw: Any, generation: Generation, path: str) -> Answer:
    """One entry of an answers file: a sampling answer (a string, or an object with a
    ``model``; always under "sampling/createMessage") or an elicitation answer (an
    ElicitResult's JSON; ``action`` defaults to "accept")."""
    try:
        if isinstance(raw, str):
            return CreateMessageResult("assistant", TextContent(raw), MODEL)
        if not isinstance(raw, dict):
            raise UsageError(f"{path}: the answer for {key!r} must be a JSON object or a string")
        if key == SAMPLE or "model" in raw:
            return decode(raw, CreateMessageResult, generation)
        return decode({"action": "accept", **raw}, ElicitResult, generation)
    except DecodeError as exc:
        raise UsageError(f"{path}: the answer for {key!r} is not usable: {exc}") from None


class FileAnswers:
    """Answers from a JSON object, looked up for each question by its 2026-07-28 input key,
    then (elicitation) its message, then its method, then "*" (elicitation only)."""

    def __init__(self, path: str, generation: Generation) -> None:
        self.path = path
        self.generation = generation
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--inputs: cannot read {path}: {exc.strerror or exc}") from None
        try:
            table = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--inputs: {path} is not JSON: {exc}") from None
        if not isinstance(table, dict):
            raise UsageError(f"--inputs: {path} must hold a JSON object (question -> answer)")
        self.answers: dict[str, Answer] = {
            str(key): _read_answer(str(key), raw, generation, path) for key, raw in table.items()
        }
        self.unanswered: list[str] = []
        """What was asked and found no answer (for the error message)."""

    @property
    def samples(self) -> bool:
        return SAMPLE in self.answers

    def _keys(self, ctx: InputContext, *more: str) -> list[str]:
        return driver_for(self.generation).input_keys(ctx.key) + list(more)

    def _find(self, kind: type[T], keys: list[str], what: str) -> T:
        for key in keys:
            answer = self.answers.get(key)
            if isinstance(answer, kind):
                return answer
        tried = ", ".join(repr(k) for k in keys)
        self.unanswered.append(f"{what} (looked up: {tried})")
        raise RPCError(-32601, f"no answer in {self.path} for {what}")

    async def elicit(self, ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        keys = self._keys(ctx, params.message, ELICIT, ANY)
        return self._find(ElicitResult, keys, f"elicitation {params.message!r}")

    async def sample(
        self, ctx: InputContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult:
        return self._find(CreateMessageResult, self._keys(ctx, SAMPLE), "sampling/createMessage")


ACTION_WORDS = {
    **dict.fromkeys(("accept", "a", "y", "yes"), ElicitAction.ACCEPT),
    **dict.fromkeys(("decline", "d", "n", "no"), ElicitAction.DECLINE),
    **dict.fromkeys(("cancel", "c"), ElicitAction.CANCEL),
}
"""What the answer prompt takes (any case): the action, its first letter, or y/yes, n/no."""
YES_NO = {
    **dict.fromkeys(("y", "yes", "true", "t", "1"), True),
    **dict.fromkeys(("n", "no", "false", "f", "0"), False),
}
"""What a yes/no field takes (any case)."""


def _pick(console: Console, label: Any, words: dict[str, T], default: str, say: str) -> T:
    """Ask until the reply is one of ``words`` (case and surrounding spaces ignored)."""
    from rich.prompt import Prompt
    from rich.text import Text

    while True:
        reply = Prompt.ask(label, console=console, default=default)
        picked = words.get(reply.strip().lower())
        if picked is not None:
            return picked
        console.print(Text(f"  {say}"))


def _ask_action(console: Console, default: ElicitAction) -> ElicitAction:
    from rich.text import Text

    # Text, not a str: rich reads "[accept/...]" in a str as markup and drops it, and the
    # choices showed only after a wrong answer.
    label = Text("answer [accept/decline/cancel, or y/n]")
    return _pick(console, label, ACTION_WORDS, default.value, "accept, decline or cancel (y/n)")


def _field_value(console: Console, name: str, spec: dict[str, Any], required: bool) -> Any:
    """Ask for one form field, typed by its JSON schema; None for a skipped optional one."""
    from rich.prompt import Prompt
    from rich.text import Text

    label = for_terminal(str(spec.get("title") or name))  # the server's words: shown, not run
    if spec.get("description"):
        label += for_terminal(f" ({spec['description']})")
    default = spec.get("default")
    kind = spec.get("type")
    choices = spec.get("enum")
    if choices is None and isinstance(spec.get("oneOf"), list):
        choices = [c.get("const") for c in spec["oneOf"] if isinstance(c, dict) and "const" in c]
    if isinstance(choices, list) and choices:
        shown = [for_terminal(str(c)) for c in choices]
        if default is not None and for_terminal(str(default)) in shown:
            picked = Prompt.ask(
                Text(label), console=console, choices=shown, default=for_terminal(str(default))
            )
        else:
            picked = Prompt.ask(Text(label), console=console, choices=shown)
        return choices[shown.index(picked)]
    if kind == "boolean":
        said = "y" if default else "n"
        return _pick(console, Text(label + " [y/n]"), YES_NO, said, "y or n (yes or no)")
    hint = "" if required else " (empty: leave out)"
    while True:
        text = Prompt.ask(
            Text(label + hint),
            console=console,
            default="" if default is None else for_terminal(str(default)),
            show_default=default is not None,
        )
        if text == "" and not required:
            return None
        if kind == "integer" or kind == "number":
            try:
                return int(text) if kind == "integer" else float(text)
            except ValueError:
                console.print(Text(f"  not {'an integer' if kind == 'integer' else 'a number'}"))
                continue
        if text == "":
            console.print(Text("  a value is required"))
            continue
        return text


def ask_elicitation(
    console: Console, task_id: str | None, params: ElicitRequestParams
) -> ElicitResult:
    """The terminal dialogue for one elicitation (blocking: run it in a thread)."""
    from rich.text import Text

    who = f"task {task_id}" if task_id else "the server"
    said = for_terminal(f"{who} asks: {params.message}")
    console.print(Text(said, style="bold magenta"))
    if isinstance(params, ElicitRequestURLParams):
        console.print(Text(for_terminal(f"  open this URL yourself: {params.url}")))
        return ElicitResult(_ask_action(console, ElicitAction.DECLINE))
    picked = _ask_action(console, ElicitAction.ACCEPT)
    if picked is not ElicitAction.ACCEPT:
        return ElicitResult(picked)
    assert isinstance(params, ElicitRequestFormParams)
    schema = params.requested_schema
    properties = schema.get("properties")
    required = set(schema.get("required") or ())
    content: dict[str, Any] = {}
    if isinstance(properties, dict):
        for name, spec in properties.items():
            value = _field_value(
                console, name, spec if isinstance(spec, dict) else {}, name in required
            )
            if value is not None:
                content[name] = value
    return ElicitResult(ElicitAction.ACCEPT, content)


def ask_sampling(
    console: Console, task_id: str | None, params: CreateMessageRequestParams
) -> CreateMessageResult:
    """The terminal dialogue for one sampling request: you are the model."""
    from rich.prompt import Prompt
    from rich.text import Text

    who = f"task {task_id}" if task_id else "the server"
    console.print(
        Text(for_terminal(f"{who} asks the model (you) for a reply:"), style="bold magenta")
    )
    for message in params.messages:
        blocks = message.content if isinstance(message.content, tuple) else (message.content,)
        for block in blocks:
            said = block.text if isinstance(block, TextContent) else repr(block)
            console.print(Text(for_terminal(f"  {message.role}: {said}")))
    reply = Prompt.ask("reply", console=console)
    return CreateMessageResult("assistant", TextContent(reply), MODEL)


class InteractiveAnswers:
    """Answers typed on the terminal, one question at a time, the live display paused."""

    def __init__(self, output: Output) -> None:
        from rich.console import Console

        self.output = output
        self.console = Console(stderr=True, highlight=False)

    def _ask(
        self, dialogue: Callable[[Console, str | None, Any], T], task_id: str | None, params: Any
    ) -> Callable[[], T]:
        return lambda: dialogue(self.console, task_id, params)

    async def elicit(self, ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        return await self.output.prompting(self._ask(ask_elicitation, ctx.task_id, params))

    async def sample(
        self, ctx: InputContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult:
        return await self.output.prompting(self._ask(ask_sampling, ctx.task_id, params))


class Answering:
    """How ``--inputs`` answers, and the InputRouter of each client that answers so: every
    router of a run shares the handlers (one answers file, one terminal) and declares the same
    capabilities. With a shared journal (``--journal``), each router takes an input key there
    before answering it (``InputRouter(journal=...)``), under the run's worker name: a key one
    run answers is never answered by another."""

    def __init__(
        self,
        elicit: ElicitationHandler,
        sample: SamplingHandler | None,
        answers: FileAnswers | None,
    ) -> None:
        self.elicit = elicit
        self.sample = sample
        self.answers = answers
        """The file's answers, when ``--inputs`` names a file (its ``unanswered`` is shared)."""

    def capabilities(self) -> ClientCapabilities:
        """What a client answering so declares: elicitation (form mode), and sampling when
        the file answers it or on the terminal."""
        return self.router().capabilities()

    def router(
        self, journal: SharedJournal | None = None, worker: str | None = None
    ) -> InputRouter:
        """A new router answering so (a router serves one client: one per client)."""
        router = InputRouter(
            elicitation=ElicitationCapability(form={}),
            sampling=SamplingCapability() if self.sample is not None else None,
            journal=journal,
            worker=worker,
        )
        router.default_elicitation(self.elicit)
        if self.sample is not None:
            router.default_sampling(self.sample)
        return router


def make_answering(inputs: str | None, generation: Generation, output: Output) -> Answering | None:
    """How input is answered as ``--inputs`` says (None without it: nothing is answered, and
    nothing declared)."""
    if inputs is None:
        return None
    if inputs == "interactive":
        if not sys.stdin.isatty():
            raise UsageError("--inputs interactive needs a terminal on stdin")
        asker = InteractiveAnswers(output)
        return Answering(asker.elicit, asker.sample, None)
    answers = FileAnswers(inputs, generation)
    return Answering(answers.elicit, answers.sample if answers.samples else None, answers)
