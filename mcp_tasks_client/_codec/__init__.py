"""Wire codecs: typed models to and from each protocol generation's JSON.

Job: the only place JSON shapes are parsed and written. ``_converter.py`` is the strict
converter both generations share (a DecodeError names the JSON path of the first problem;
``_dispatch.py`` finds each type's hook, with cattrs' interface but not cattrs itself);
``v2025_11_25.py`` and ``v2026_07_28.py`` are each generation's converter (one module per
generation: their differences in shape live there and nowhere else); ``_fast_task.py`` is the
Task decoder's fast path (it declines to the strict path for anything unusual, and a property
test holds it to the strict path); ``messages.py`` frames JSON-RPC messages; ``headers.py`` is
the 2026-07-28 header codec (values carried in HTTP headers, ``x-mcp-header`` arguments).

May import: ``models`` and ``_exceptions`` (the floor beneath). Nothing else of the library:
no I/O, no clock, no generation behaviour beyond shapes (that is the drivers').
"""
