"""A griffe extension for the documentation site: reST roles in docstrings become links.

The docstrings cross-reference with reST roles (``:class:`~mcp_tasks_client.Limits```), which
read well in ``help()``. For the site, each role naming a public object becomes an autorefs
link (``[`Limits`][mcp_tasks_client.Limits]``), and any other role plain code. Text only: the
library's docstrings are not changed.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|meth|func|attr|mod|exc|data|obj):`(?P<body>[^`]+)`")
TITLED = re.compile(r"(?P<title>.+?)\s*<(?P<target>[^>]+)>")
PACKAGE = "mcp_tasks_client"


def _public() -> set[str]:
    import mcp_tasks_client

    return set(mcp_tasks_client.__all__)


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
        head, _, rest = target.partition(".")
        text = title or (target.rsplit(".", 1)[-1] if short else target)
        # A public class or function, linked; a member of one is linked to its class.
        if head in self.public and "." not in rest:
            return f"[`{text}`][{PACKAGE}.{head}]"
        return f"`{text}`"

    def _convert(self, obj: griffe.Object) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(self._link, obj.docstring.value)

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        self._convert(obj)
