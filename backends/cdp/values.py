"""Runtime.RemoteObject -> the one-line value and type a person reads.

Objects are shown from the inspector's preview (`generatePreview`), one level
deep, the way DevTools' console shows them: {name: "demo", sizes: Array(3)}.
Pure functions; no protocol access.
"""

from __future__ import annotations

import json
import re
from typing import Any

_IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*$")

MAX_VALUE_CHARS = 1000


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0]


def function_signature(description: str) -> str:
    """`function add(a, b) {...}` -> `function add(a, b)`; class bodies likewise."""
    head = _first_line(description).strip()
    if "{" in head:
        head = head[: head.index("{")].rstrip()
    if "=>" in head:
        head = head[: head.index("=>") + 2] + " …"
    return head or "function"


def remote_type(obj: dict[str, Any]) -> str:
    """The type shown beside a value: typeof for primitives, the class for objects."""
    kind = obj.get("type", "undefined")
    if kind != "object":
        return kind
    subtype = obj.get("subtype")
    if subtype == "null":
        return "null"
    return obj.get("className") or subtype or "Object"


def _preview_value(prop: dict[str, Any]) -> str:
    kind = prop.get("type")
    value = prop.get("value", "")
    if kind == "string":
        return _quote(value)
    if kind == "object" and prop.get("valuePreview"):
        return format_preview(prop["valuePreview"], nested=True)
    if kind == "function":
        return "ƒ"
    if kind == "accessor":
        return "(…)"
    return str(value)


def format_preview(preview: dict[str, Any], nested: bool = False) -> str:
    """An ObjectPreview as DevTools prints it."""
    subtype = preview.get("subtype")
    description = preview.get("description") or ""
    overflow = preview.get("overflow", False)
    if subtype in ("map", "set", "weakmap", "weakset") and "entries" in preview:
        parts = []
        for entry in preview.get("entries") or []:
            value = entry.get("value") or {}
            value_text = format_preview(value, nested=True) if value else "undefined"
            if "key" in entry and entry["key"] is not None:
                key_text = format_preview(entry["key"], nested=True)
                parts.append(f"{key_text} => {value_text}")
            else:
                parts.append(value_text)
        if overflow:
            parts.append("…")
        return f"{description} {{{', '.join(parts)}}}"
    if preview.get("type") != "object" or subtype in (
        "null", "regexp", "date", "error", "promise", "node", "proxy", "symbol"
    ) and not preview.get("properties"):
        if preview.get("type") == "string":
            return _quote(description)
        return _first_line(description)
    properties = preview.get("properties") or []
    if subtype in ("array", "typedarray"):
        items = [
            _preview_value(p) if p.get("name", "").isdigit() else f"{p.get('name')}: {_preview_value(p)}"
            for p in properties
        ]
        if overflow:
            items.append("…")
        if nested and not items:
            return description
        return f"[{', '.join(items)}]"
    items = [f"{_property_key(p.get('name', ''))}: {_preview_value(p)}" for p in properties]
    if overflow:
        items.append("…")
    if nested and not items and description not in ("Object",):
        return description
    body = "{" + ", ".join(items) + "}"
    if description and description != "Object":
        return f"{description} {body}"
    return body


def _property_key(name: str) -> str:
    return name if _IDENTIFIER.match(name) or name.isdigit() else _quote(name)


def format_remote(obj: dict[str, Any]) -> str:
    """The one-line value of a RemoteObject, capped at MAX_VALUE_CHARS."""
    text = _format_remote(obj)
    if len(text) > MAX_VALUE_CHARS:
        text = text[: MAX_VALUE_CHARS - 1] + "…"
    return text


def _format_remote(obj: dict[str, Any]) -> str:
    kind = obj.get("type", "undefined")
    if kind == "undefined":
        return "undefined"
    if kind == "string":
        return _quote(str(obj.get("value", "")))
    if "unserializableValue" in obj:
        return str(obj["unserializableValue"])
    if kind in ("number", "boolean"):
        if "value" in obj:
            value = obj["value"]
            if isinstance(value, bool):
                return "true" if value else "false"
            return obj.get("description") or json.dumps(value)
        return obj.get("description", "")
    if kind == "bigint":
        return obj.get("description", "") or str(obj.get("value", ""))
    if kind == "symbol":
        return obj.get("description", "Symbol()")
    if kind == "function":
        return function_signature(obj.get("description", "function"))
    # objects
    subtype = obj.get("subtype")
    if subtype == "null":
        return "null"
    if subtype == "error":
        return _first_line(obj.get("description", "Error"))
    if "preview" in obj and subtype not in ("regexp", "date"):
        return format_preview(obj["preview"])
    if "value" in obj:  # returnByValue
        return json.dumps(obj["value"], ensure_ascii=False)
    return _first_line(obj.get("description") or obj.get("className") or "Object")


def child_counts(obj: dict[str, Any]) -> tuple[int | None, int | None]:
    """(named, indexed) child counts where the description tells them: Array(3)."""
    if obj.get("subtype") in ("array", "typedarray"):
        match = re.search(r"\((\d+)\)", obj.get("description", ""))
        if match:
            return None, int(match.group(1))
    return None, None


def has_children(obj: dict[str, Any]) -> bool:
    return (
        obj.get("type") == "object"
        and obj.get("subtype") != "null"
        and bool(obj.get("objectId"))
    )


def child_evaluate_name(parent: str | None, name: str) -> str | None:
    """The expression that reads property `name` of the value `parent` names."""
    if not parent:
        return name if _IDENTIFIER.match(name) else None
    if name.startswith("[["):
        return None
    if name.isdigit():
        return f"{parent}[{name}]"
    if _IDENTIFIER.match(name):
        return f"{parent}.{name}"
    return f"{parent}[{_quote(name)}]"


def console_text(args: list[dict[str, Any]]) -> str:
    """The line console.log(...) prints, from its arguments: strings bare,
    everything else as formatted values."""
    parts = []
    for arg in args:
        if arg.get("type") == "string":
            parts.append(str(arg.get("value", "")))
        else:
            parts.append(format_remote(arg))
    return " ".join(parts)
