"""A griffe extension for the documentation site: reST roles in docstrings become links.

The docstrings cross-reference with reST roles (``:class:`~mcp_tasks_client.Limits```), which
read well in ``help()``. For the site, each role naming a public object becomes an autorefs
link to the page of its public home (``[`Limits`][mcp_tasks_client.Limits]``,
``[`Task`][mcp_tasks_client.models.Task]``), and any other role plain code. A role may name
the object by its short name, its top-level path or its submodule path: each public name has
one home (``mcp_tasks_client.__all__`` or a public submodule's), and that is where it links.
Text only: the library's docstrings are not changed.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|meth|func|attr|mod|exc|data|obj):`(?P<body>[^`]+)`")
TITLED = re.compile(r"(?P<title>.+?)\s*<(?P<target>[^>]+)>")
PACKAGE = "mcp_tasks_client"
SUBMODULES = ("models", "errors", "transports", "protocol", "wire")


def _public() -> dict[str, str]:
    """Each public name -> the full path its reference entry is documented under."""
    import mcp_tasks_client

    homes: dict[str, str] = {}
    for sub in SUBMODULES:
        module = importlib.import_module(f"{PACKAGE}.{sub}")
        for name in module.__all__:
            homes.setdefault(name, f"{PACKAGE}.{sub}.{name}")
    for name in mcp_tasks_client.__all__:
        homes.setdefault(name, f"{PACKAGE}.{name}")  # the root error stays under errors
    return homes


class RolesToLinks(griffe.Extension):
    def __init__(self) -> None:
        self.public = _public()

    def _link(self, match: re.Match[str]) -> str:
        body = match["body"]
        titled = TITLED.fullmatch(body)
        title, target = (titled["title"], titled["target"]) if titled else (None, body)
        short = target.startswith("~")
        target = target.lstrip("~").removesuffix("()")
        if target.startswith(PACKAGE + "."):
            target = target[len(PACKAGE) + 1 :]
        text = title or (target.rsplit(".", 1)[-1] if short else target)
        sub, _, named = target.partition(".")
        if sub in SUBMODULES and named:
            target = named
        head, _, rest = target.partition(".")
        # A public class or function, linked; a member of one is linked to its class.
        if head in self.public and "." not in rest:
            return f"[`{text}`][{self.public[head]}]"
        return f"`{text}`"

    def _convert(self, obj: griffe.Object) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(self._link, obj.docstring.value)

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        self._convert(obj)
