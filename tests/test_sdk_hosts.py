"""Issue 38: the SDK-host tests, each run in its host's venv (tests/sdk_hosts/README.md).

The official SDK's two majors cannot share one environment, nor the suite's: each file of
``tests/sdk_hosts`` runs with the Python of the venv that holds its SDK (``venv-sdk1``: mcp
1.30 and fastmcp 3; ``venv-sdk2``: mcp 2.3 and fastmcp 4), this library imported from the
checkout. Under CI=true a missing venv fails, as a missing peer does.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from peers.harness import peers_root
from peers.install import LIBRARY_DEPS, SPECS, peer_dir, stamp_ok, venv_python

from mcp_tasks_client import Generation
from mcp_tasks_client.sdk import SdkUnsupported, open_client, sdk_session_of

REPO = Path(__file__).resolve().parent.parent
# One pytest run per venv: its servers start once for all its files (sdk_hosts/conftest.py).
HOSTS = {"sdk1": ["test_mcp1.py"], "sdk2": ["test_mcp2.py", "test_mcp2_session.py"]}


def _venv(name: str) -> Path:
    spec = SPECS[name]
    root = peers_root()
    if not stamp_ok(spec, root):
        msg = f"{spec.requirement} is not installed; run `python tests/peers/install.py`"
        if os.environ.get("CI") == "true":
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    return venv_python(peer_dir(spec, root))


@pytest.mark.slow  # a whole file of peer tests in one test: started first (tests/conftest.py)
@pytest.mark.parametrize("venv", sorted(HOSTS))
def test_in_the_hosts_venv(venv: str, tmp_path: Path) -> None:
    python = _venv(venv)
    report = tmp_path / "report.xml"
    env = {
        **os.environ,
        "MCP_TASKS_SDK_HOST": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.run(
        [
            str(python),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            f"--junitxml={report}",
            *(str(REPO / "tests" / "sdk_hosts" / name) for name in HOSTS[venv]),
        ],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=420,  # generous: a loaded machine; both sdk2 files in one run
        check=False,
    )
    tail = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, tail
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite[0]
    ran = int(suite.get("tests", 0)) - int(suite.get("skipped", 0))
    assert ran >= 4, tail
    assert int(suite.get("failures", 0)) == 0, tail


def test_the_host_venvs_hold_the_librarys_dependencies() -> None:
    """LIBRARY_DEPS (what a host venv gets beside the SDK) names every runtime dependency of
    pyproject.toml, with the same bound."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    block = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    runtime = re.findall(r'^\s*"([^"]+)"', block, flags=re.M)
    assert runtime
    assert set(runtime) <= set(LIBRARY_DEPS), sorted(set(runtime) - set(LIBRARY_DEPS))


def test_an_object_that_is_no_sdk_session_is_refused_up_front() -> None:
    """SdkUnsupported names what to pass, before anything is sent."""
    with pytest.raises(SdkUnsupported, match="not an official SDK ClientSession"):
        sdk_session_of(object())

    class NotConnected:
        @property
        def session(self) -> object:
            raise RuntimeError("Client is not connected. Use the 'async with client:' pattern")

    with pytest.raises(SdkUnsupported, match="enter it first"):
        sdk_session_of(NotConnected())
    with pytest.raises(SdkUnsupported):
        open_client(object(), generation=Generation.V2025_11_25)


def test_importing_the_sdk_package_does_not_import_the_sdk() -> None:
    code = "import sys, mcp_tasks_client.sdk; print('mcp' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.strip() == "False"
