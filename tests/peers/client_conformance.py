"""The client-side conformance suite against real task clients: the published table.

``python tests/peers/client_conformance.py [--write]`` runs every scenario of
``mcp_tasks_client.conformance.clients`` against each client below (installed by
``install.py``; a client whose peer is missing is left out with a note), prints the Markdown
table, and with ``--write`` puts it into ``docs/client-conformance.md`` between its markers.
``nox -s client-conformance`` runs it; ``tests/test_client_conformance_peers.py`` checks the
published table is what the suite measures.

Clients (their scripts follow the official suite's client contract; see each script):
  this library            examples/conformance_client.py (both generations)
  mcp 1.30                tests/peers/clients/mcp1_client.py (2025-11-25)
  TypeScript SDK 1.32     tests/peers/ts1_client.mjs (2025-11-25)
  fastmcp 4.1.4           tests/peers/clients/fastmcp4_client.py (2026-07-28)
  ext-tasks 0.2.2         tests/peers/ext_tasks_client.mjs on @modelcontextprotocol/client 2.4.0
                          (both generations; 2026-07-28 through the script's rawDispatch)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import attrs

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))

from mcp_tasks_client import Generation  # noqa: E402
from mcp_tasks_client.conformance.clients import SCENARIOS, Check, run_scenario  # noqa: E402
from peers.harness import FASTMCP_ENV, PEERS, peer_available, peers_root  # noqa: E402
from peers.install import SPECS, peer_dir, stamp_ok, sync_scripts, venv_python  # noqa: E402

DOC = REPO / "docs" / "client-conformance.md"
BEGIN, END = "<!-- table: begin -->", "<!-- table: end -->"
G1, G2 = Generation.V2025_11_25, Generation.V2026_07_28


@attrs.frozen
class TaskClient:
    name: str
    peer: str | None  # the installed peer it needs (None: this library)
    generations: tuple[Generation, ...]

    def command(self) -> list[str]:
        root = peers_root()
        if self.peer is None:
            return [sys.executable, str(REPO / "examples" / "conformance_client.py")]
        spec = SPECS[self.peer]
        if spec.kind == "node":
            script = sync_scripts(spec, root)[-1]  # the client script is the last one
            return [shutil.which("node") or "node", str(script)]
        script = HERE / "clients" / f"{self.peer}_client.py"
        return [str(venv_python(peer_dir(spec, root))), "-W", "ignore", str(script)]

    def available(self) -> bool:
        if self.peer is None:
            return True
        if self.peer == "ext-tasks":
            return stamp_ok(SPECS["ext-tasks"], peers_root()) and shutil.which("node") is not None
        return peer_available(PEERS[self.peer])


CLIENTS = (
    TaskClient("mcp-tasks-client (this library)", None, (G1, G2)),
    TaskClient("mcp 1.30 (Python SDK)", "mcp1", (G1,)),
    TaskClient("TypeScript SDK 1.32", "ts1", (G1,)),
    TaskClient("fastmcp 4.1.4 (fastmcp_tasks)", "fastmcp4", (G2,)),
    TaskClient("ext-tasks 0.2.2 on client 2.4.0", "ext-tasks", (G1, G2)),
)


async def measure(client: TaskClient) -> list[tuple[str, Generation, Check]]:
    env = {**os.environ, **dict(FASTMCP_ENV)}
    rows = []
    for name, scenario in SCENARIOS.items():
        for generation in client.generations:
            if generation not in scenario.generations:
                continue
            checks = await run_scenario(client.command(), name, generation, env=env, timeout=60)
            rows += [(name, generation, c) for c in checks]
    return rows


def row_text(client: TaskClient, name: str, generation: Generation, check: Check) -> str:
    verdict = "pass" if check.status == "SUCCESS" else check.status.lower()
    error = (check.error_message or "").replace("|", "/")
    cells = (client.name, name, generation.value, check.id, check.rule, verdict, error)
    return "| " + " | ".join(cells) + " |"


def render(measured: Sequence[tuple[TaskClient, list[tuple[str, Generation, Check]]]]) -> str:
    lines = ["| Client | Scenario | Version | Check | Rule | Verdict | What the suite saw |"]
    lines.append("|---|---|---|---|---|---|---|")
    for client, rows in measured:
        lines += [row_text(client, n, g, c) for n, g, c in rows]
    return "\n".join(lines) + "\n"


def write(table: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{table}{END}{tail}", encoding="utf-8")


async def main_async(args: argparse.Namespace) -> int:
    measured = []
    for client in CLIENTS:
        if not client.available():
            print(f"{client.name}: not installed; run tests/peers/install.py", file=sys.stderr)
            continue
        rows = await measure(client)
        measured.append((client, rows))
        if args.json:
            for name, generation, check in rows:
                line = {"client": client.name, "scenario": name, "version": generation.value}
                print(json.dumps({**line, **check.to_json()}))
    table = render(measured)
    print(table)
    if args.write:
        write(table)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--write", action="store_true", help="update docs/client-conformance.md")
    parser.add_argument("--json", action="store_true", help="also print each check as JSON")
    return anyio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
