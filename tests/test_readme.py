"""Docs that run: the README's code is valid Python whose imports exist; its commands are the
ones nox and .ci/run use."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()


TOUR = (REPO / "docs" / "tour.md").read_text()


def test_readme_python_blocks_compile_and_import() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README + TOUR, flags=re.DOTALL)
    assert len(blocks) >= 2
    for block in blocks:
        tree = ast.parse(block)
        imports: list[ast.stmt] = [
            node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
        ]
        exec(compile(ast.Module(body=imports, type_ignores=[]), "README.md", "exec"), {})


def test_readme_commands_are_what_ci_and_nox_run() -> None:
    assert "python3 -m pip install nox && python3 -m nox -s demo" in README
    assert "python3 -m pip install nox && python3 -m nox\n" in README
    ci = (REPO / ".ci" / "run").read_text()
    assert re.search(r"^python3 -m nox( |$)", ci, flags=re.MULTILINE)  # the plain default run


def _bundled_tools() -> set[str]:
    """The tools of the servers `nox -s serve` runs: mcp 1.30 (its TOOLS) and fastmcp 4.1.4."""
    peers = REPO / "tests" / "peers"
    mcp1 = (peers / "mcp1_tasks_server.py").read_text()
    fastmcp = (peers / "fastmcp_tasks_server.py").read_text()
    names = set(re.findall(r'_tool\(\s*"(\w+)"', mcp1))
    names |= set(re.findall(r"^@mcp\.tool[^\n]*\n(?:async )?def (\w+)\(", fastmcp, flags=re.M))
    assert {"plain_echo", "confirm", "progress_steps", "ask_plain", "slow_compute"} <= names
    return names


def test_every_tool_the_readme_and_guides_call_is_a_bundled_servers() -> None:
    """A snippet copied against `nox -s serve` finds its tool (no `render` of nowhere); one
    that serves its own FaultServer (a busy server, say) calls one of the FaultServer's."""
    from mcp_tasks_client.testing._fault_server import DIALECTS

    tools = _bundled_tools()
    fault_tools = {name for dialect in DIALECTS.values() for name in dialect.tools}
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("**/*.md"))]
    for doc in docs:
        for code in re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.DOTALL):
            served = fault_tools if "FaultServer(" in code else tools
            for name in re.findall(r'ToolCall\(\s*"(\w+)"', code):
                assert name in served, f"{doc.name} calls {name!r}, which no bundled server has"


def test_the_mrtr_example_calls_the_tool_that_asks() -> None:
    """The tour's MRTR snippet answers a question: its tool must ask one (fastmcp's ask_plain)."""
    mrtr = TOUR[TOUR.index("# MRTR (2026-07-28)") :]
    mrtr = mrtr[: mrtr.index("```")]
    called = set(re.findall(r'ToolCall\("(\w+)"', mrtr))
    assert called == {"ask_plain"}
    fastmcp = (REPO / "tests" / "peers" / "fastmcp_tasks_server.py").read_text()
    body = fastmcp[fastmcp.index("async def ask_plain(") :]
    assert "InputRequiredResult(" in body[: body.index("\n\n\n")]


def test_readme_is_a_quickstart() -> None:
    """Issue 34: README was 885 lines of reference; it is a quickstart now (about 150 lines:
    what it is, the two commands, a first task with inputs from your own script on trio and
    asyncio, the command line, where the docs are), the reference in docs/tour.md."""
    assert len(README.splitlines()) <= 160
    headings = re.findall(r"^## (.+)$", README, flags=re.M)
    assert headings == [
        "Two commands",
        "A first task from your own script",
        "From the command line",
        "Where the docs are",
    ]
    assert "](docs/sync.md)" in README  # the blocking path's page
    assert "](docs/tour.md)" in README  # where the reference tables went
    for table in ("## What you decide", "## Errors", "## Dependencies", "## Performance"):
        assert table in TOUR
    nav = (REPO / "mkdocs.yml").read_text()
    assert "tour.md" in nav
    assert "sync.md" in nav


def test_a_router_without_its_capabilities_declared_says_exactly_what_to_do() -> None:
    """Issue 34: a newcomer's first task with inputs met this error, and only a code comment
    said what to do. README's first program passes the capabilities; the error says how."""
    from mcp_tasks_client import Client, Generation, InputRouter
    from mcp_tasks_client.errors import UsageError
    from mcp_tasks_client.models import ElicitationCapability, Implementation
    from mcp_tasks_client.transports import memory_transport_pair

    client_end, _server_end = memory_transport_pair()
    client = Client(
        client_end, generation=Generation.V2025_11_25, client_info=Implementation("t", "1")
    )
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    try:
        router.attach(client)
    except UsageError as exc:
        said = str(exc)
    else:
        raise AssertionError("attached a router whose capabilities the client never declared")
    assert "make the InputRouter first" in said
    assert "Client(transport, ..., capabilities=router.capabilities())" in said
    assert "capabilities=router.capabilities()" in README
