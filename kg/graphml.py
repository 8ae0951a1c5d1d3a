"""GraphML for the knowledge base's graphs, written directly.

``networkx.write_graphml`` builds an XML element for every node, edge and value: most of a
second for our three graphs, plus the import of networkx. :func:`graphml` writes the same
document, byte for byte, as networkx 3 (with lxml) writes the directed graph or multigraph of
the same nodes and edges: keys numbered ``d0``, ``d1`` ... in order of first use (the graph's
name, then node values, then edge values) and listed last first, one key per name, type and
scope; nodes in order of first mention; edges grouped by source node; parallel edges of a
multigraph numbered from 0; values typed ``string``, ``long``, ``double`` or ``boolean`` and
written as Python's ``str`` writes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from os import PathLike
from typing import Any

HEADER = (
    "<?xml version='1.0' encoding='utf-8'?>\n"
    '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
    'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">'
)
#: GraphML's name for each value type (networkx's ``xml_type``; bool before int).
TYPES = {bool: "boolean", int: "long", float: "double", str: "string"}
#: Characters XML 1.0 cannot hold at all (lxml refuses them too).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_TEXT = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"}
_ATTRIBUTE = {**_TEXT, '"': "&quot;", "\n": "&#10;", "\t": "&#9;"}
_TEXT_RE = re.compile("[&<>\r]")
_ATTRIBUTE_RE = re.compile('[&<>\r"\n\t]')

Node = tuple[str, Mapping[str, Any]]
EdgeRow = tuple[str, str, Mapping[str, Any]]


def _text(value: str) -> str:
    if _NOT_XML.search(value):
        raise ValueError(f"{value[:60]!r} holds a character XML cannot hold")
    return _TEXT_RE.sub(lambda m: _TEXT[m.group()], value)


def _attribute(value: str) -> str:
    if _NOT_XML.search(value):
        raise ValueError(f"{value[:60]!r} holds a character XML cannot hold")
    return _ATTRIBUTE_RE.sub(lambda m: _ATTRIBUTE[m.group()], value)


def graphml(
    name: str, nodes: Iterable[Node], edges: Iterable[EdgeRow], *, multigraph: bool = False
) -> str:
    """The GraphML document of a directed graph called ``name``.

    Args:
        name: the graph's name (its ``name`` value).
        nodes: ``(id, values)``; a repeated id updates the node's values.
        edges: ``(source, target, values)``; an edge to a node not given is added bare. Without
            ``multigraph`` a repeated edge updates the first one's values.
        multigraph: keep parallel edges apart, each with its number (``id="0"`` ...).

    Raises:
        TypeError: a value is not text, an integer, a float or a boolean.
        ValueError: text holds a character XML cannot hold.
    """
    data: dict[str, dict[str, Any]] = {}
    for node, values in nodes:
        data.setdefault(node, {}).update(values)
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for source, target, values in edges:
        for end in (source, target):
            data.setdefault(end, {})
        parallel = out.setdefault(source, {}).setdefault(target, [])
        if multigraph or not parallel:
            parallel.append(dict(values))
        else:
            parallel[0].update(values)

    keys: dict[tuple[str, str, str], str] = {}

    def key(attribute: str, value: Any, scope: str) -> str:
        kind = TYPES.get(type(value))
        if kind is None:
            raise TypeError(f"GraphML holds no {type(value).__name__} ({attribute}={value!r})")
        return keys.setdefault((attribute, kind, scope), f"d{len(keys)}")

    def element(tag: str, attributes: str, values: Mapping[str, Any], scope: str) -> str:
        if not values:
            return f"<{tag} {attributes}/>\n"
        rows = "".join(
            f'  <data key="{key(k, v, scope)}">{_text(str(v))}</data>\n' for k, v in values.items()
        )
        return f"<{tag} {attributes}>\n{rows}</{tag}>\n"

    graph_key = key("name", name, "graph")
    body = [f'<graph edgedefault="directed"><data key="{graph_key}">{_text(name)}</data>\n']
    body += [element("node", f'id="{_attribute(n)}"', values, "node") for n, values in data.items()]
    for source in data:
        for target, parallel in out.get(source, {}).items():
            ends = f'source="{_attribute(source)}" target="{_attribute(target)}"'
            for number, values in enumerate(parallel):
                where = f'{ends} id="{number}"' if multigraph else ends
                body.append(element("edge", where, values, "edge"))
    body.append("</graph></graphml>")
    declared = [
        f'<key id="{kid}" for="{scope}" attr.name="{_attribute(attribute)}" attr.type="{kind}"/>\n'
        for (attribute, kind, scope), kid in reversed(keys.items())
    ]
    return HEADER + "".join(declared) + "".join(body)


def write(
    path: str | PathLike[str],
    name: str,
    nodes: Iterable[Node],
    edges: Iterable[EdgeRow],
    *,
    multigraph: bool = False,
) -> None:
    """Write :func:`graphml` to ``path`` in UTF-8."""
    with open(path, "wb") as handle:
        handle.write(graphml(name, nodes, edges, multigraph=multigraph).encode("utf-8"))
