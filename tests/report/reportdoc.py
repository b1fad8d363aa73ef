"""Reading a report.html back: the data of its Bokeh document, decoded as Bokeh's own
serialiser wrote them (base64 bytes, gzip-compressed or not, little-endian ndarrays)."""

from __future__ import annotations

import base64
import gzip
import json
import math
import re
from typing import Any

import numpy as np

DOC_SCRIPT = re.compile(r'<script type="application/json" id="[^"]+">(.*?)</script>', re.S)


def document(html: str) -> dict:
    """The page's one Bokeh document (its JSON)."""
    blocks = DOC_SCRIPT.findall(html)
    assert len(blocks) == 1, f"expected one embedded Bokeh document, found {len(blocks)}"
    docs = json.loads(blocks[0])
    assert len(docs) == 1
    return next(iter(docs.values()))


def decode(value: Any) -> Any:
    """A serialised value as Python: ndarrays as numpy arrays, lists element by element,
    Bokeh's encoded numbers (NaN, infinities) as floats."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    kind = value.get("type")
    if kind == "ndarray":
        array = value["array"]
        if isinstance(array, dict) and array.get("type") == "bytes":
            raw = base64.b64decode(array["data"])
            if raw[:2] == b"\x1f\x8b":
                raw = gzip.decompress(raw)
            dtype = np.dtype(value["dtype"]).newbyteorder(
                "<" if value.get("order", "little") == "little" else ">")
            return np.frombuffer(raw, dtype=dtype).reshape(value["shape"])
        return np.array(decode(array), dtype=value["dtype"]).reshape(value["shape"])
    if kind == "number":
        return {"nan": math.nan, "+inf": math.inf, "-inf": -math.inf}[value["value"]]
    if kind == "map":
        return {k: decode(v) for k, v in value.get("entries", [])}
    return value


def sources(html: str) -> dict[str, dict[str, Any]]:
    """Every named ColumnDataSource of the page: ``{name: {column: values}}``."""
    found: dict[str, dict[str, Any]] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            attrs = node.get("attributes", {})
            if node.get("name") == "ColumnDataSource" and attrs.get("name"):
                found[attrs["name"]] = decode(attrs["data"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(document(html))
    return found
