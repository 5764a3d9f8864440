"""README's Python snippets, and those of docs/tour.md (README's reference sections, moved
there by issue 34), run as written against the servers `nox -s serve` runs (issue 22, item 9):
each block is executed as a module, unchanged, and what it defines is called the way its text
says (a client made as README makes it, the URL of the server it names).

Every such Python block is listed in ``RUNNERS`` by the functions it defines: a new snippet
without a runner here fails ``test_every_readme_snippet_has_a_runner``. Trio only, but for
README's first program, run on trio and on asyncio as README says; the guides' blocks run on
both in ``tests/test_docs.py``.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_tasks_client import Client, Generation, HttpTransport, InputRouter, Poller, ToolCall
from mcp_tasks_client.models import ElicitationCapability, Implementation

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()
TOUR = (REPO / "docs" / "tour.md").read_text()
SNIPPETS = re.findall(r"```python\n(.*?)```", README + TOUR, flags=re.DOTALL)
INFO = Implementation("readme-snippets", "0")

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "trio"


def defines(code: str) -> tuple[str, ...]:
    return tuple(re.findall(r"^(?:async )?def (\w+)\(", code, flags=re.M))


def snippet(*names: str) -> types.ModuleType:
    """The README block that defines exactly ``names``, executed as a module (not __main__)."""
    found = [code for code in SNIPPETS if defines(code) == names]
    assert len(found) == 1, f"README has {len(found)} blocks defining {names}"
    module = types.ModuleType("readme_snippet")
    exec(compile(found[0], f"README.md:{names[0]}", "exec"), module.__dict__)
    return module


def client(url: str, generation: Generation, **options: Any) -> Client:
    return Client(HttpTransport(url), generation=generation, client_info=INFO, **options)


FIRST_LOOK = ("ask", "main", "main_sync", "notebook_cell", "report")


async def first_look(urls: dict[str, str], tmp: Path) -> None:
    """A program: saved as first_look.py and run as README says, with the mcp1 URL: on trio,
    on asyncio, as a plain script (no async code: SyncClient) and as a notebook cell (the
    blocking calls made inside a running asyncio loop's thread). It starts a task, answers the
    question the task asks, and waits for it (issue 34: it made a plain call before, and the
    blocking path was a link)."""
    (code,) = [c for c in SNIPPETS if defines(c) == FIRST_LOOK]
    (tmp / "first_look.py").write_text(code)
    runs = re.findall(r'^python3 first_look.py "\$MCP1_URL" ?(\w*)$', README, flags=re.M)
    assert runs == ["", "asyncio", "sync", "notebook"]  # the lines README gives, in its order
    answered = ["the task asks: Confirm: ship it?", "completed: confirmed=True action=accept"]
    for how in runs:
        ran = await anyio.run_process(
            [sys.executable, str(tmp / "first_look.py"), urls["mcp1"], *([how] if how else [])]
        )
        said = ran.stdout.decode().splitlines()
        if how in ("", "asyncio"):  # the async program says which task it started
            assert said[0].startswith("started task "), (how, said)
            said = said[1:]
        assert said == answered, (how, said)


async def tasks_explicitly(urls: dict[str, str], _tmp: Path) -> None:
    code = snippet("run")  # "Client(..., capabilities=router.capabilities())", as it says
    async with client(
        urls["mcp1"], Generation.V2025_11_25, capabilities=code.router.capabilities()
    ) as c:
        await code.run(c)


async def push(urls: dict[str, str], _tmp: Path) -> None:
    code = snippet("wait_pushed")
    async with client(urls["mcp1"], Generation.V2025_11_25) as c:
        await code.wait_pushed(c, ToolCall("slow_echo", {"text": "x", "seconds": 0.2}).as_task())
    async with client(urls["fastmcp4"], Generation.V2026_07_28) as c:
        await code.wait_pushed(c, ToolCall("slow_compute", {"seconds": 0.2}).as_task())


async def progress(urls: dict[str, str], _tmp: Path) -> None:
    code = snippet("show")
    async with client(urls["mcp1"], Generation.V2025_11_25) as c:
        await c.open_listen_stream()  # "Over HTTP ... open it with client.open_listen_stream()"
        async with Poller(c) as poller:
            await code.show(c, poller)


async def two_generations(urls: dict[str, str], _tmp: Path) -> None:
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    await snippet("ask_user", "run").run(urls["fastmcp4"], router)


async def receiver(urls: dict[str, str], _tmp: Path) -> None:
    code = snippet("serve")

    async def ask_user(ctx: object, params: object) -> None:
        raise AssertionError("nothing is asked here")

    async with client(
        urls["mcp1"], Generation.V2025_11_25, capabilities=code.router.capabilities()
    ) as c:
        await code.serve(c, ask_user)


async def journal(urls: dict[str, str], tmp: Path) -> None:
    code = snippet("start_and_wait", "after_a_crash")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp)  # it writes tasks.db where it runs
        await code.start_and_wait(urls["mcp1"])
        await code.after_a_crash()
        assert (tmp / "tasks.db").exists()


async def validating(urls: dict[str, str], _tmp: Path) -> None:
    validating_block = [c for c in SNIPPETS if "ValidatingTransport" in c]
    assert len(validating_block) == 1
    module = types.ModuleType("readme_snippet")
    exec(compile(validating_block[0], "README.md:check", "exec"), module.__dict__)
    await module.check(urls["mcp1"])


async def live_probe(urls: dict[str, str], _tmp: Path) -> None:
    probing = [c for c in SNIPPETS if defines(c) == ("check",) and "ValidatingTransport" not in c]
    assert len(probing) == 1
    module = types.ModuleType("readme_snippet")
    exec(compile(probing[0], "README.md:check", "exec"), module.__dict__)
    await module.check(urls["mcp1"])


async def property_test(_urls: dict[str, str], _tmp: Path) -> None:
    snippet("test_each_broken_rule_is_reported").test_each_broken_rule_is_reported()


Runner = Callable[[dict[str, str], Path], Awaitable[None]]
RUNNERS: dict[str, Runner] = {
    ",".join(FIRST_LOOK): first_look,
    "run": tasks_explicitly,
    "wait_pushed": push,
    "show": progress,
    "ask_user,run": two_generations,
    "serve": receiver,
    "start_and_wait,after_a_crash": journal,
    "check (ValidatingTransport)": validating,
    "check (probe)": live_probe,
    "test_each_broken_rule_is_reported": property_test,
}


def key(code: str) -> str:
    names = ",".join(defines(code))
    if names == "check":
        return "check (ValidatingTransport)" if "ValidatingTransport" in code else "check (probe)"
    return names


def test_every_readme_snippet_has_a_runner() -> None:
    assert sorted(key(code) for code in SNIPPETS) == sorted(RUNNERS)


@pytest.mark.parametrize("name", list(RUNNERS))
async def test_the_readme_snippet_runs_against_the_bundled_servers(
    name: str, mcp1_http_url: str, fastmcp4_http_url: str, tmp_path: Path
) -> None:
    urls = {"mcp1": mcp1_http_url, "fastmcp4": fastmcp4_http_url}
    with anyio.fail_after(120):
        await RUNNERS[name](urls, tmp_path)
