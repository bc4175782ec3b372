"""Small pure helpers shared by the panes: how paths, origins and breakpoints read
on screen. Kept free of Textual so they are trivial to test."""

from __future__ import annotations

import os

from backends.models import Breakpoint

#: How each client origin is named on screen. The agent is what people call the MCP client.
WHO = {"tui": "you", "mcp": "agent", "cli": "cli", "session": "session", "user": "you",
       "restored": "saved", "web": "web"}
#: One letter in the breakpoint gutter for breakpoints someone else set.
WHO_LETTER = {"mcp": "A", "cli": "C", "session": "S", "restored": "R", "web": "W"}


def own_origin() -> str:
    """How this TUI names itself to the session: "web" when it is drawn in a
    browser tab (`tui-debugger serve` runs it under Textual's web driver, through
    textual-serve), else "tui". The other clients then see the tab as "web"."""
    return "web" if "web_driver" in os.environ.get("TEXTUAL_DRIVER", "") else "tui"


def who(origin: str | None) -> str:
    return WHO.get(origin or "session", origin or "session")


#: Front ends as a sentence names them ("The CLI stepped over").
WHO_PROPER = {"cli": "the CLI", "mcp": "the agent", "tui": "you", "user": "you",
              "web": "the browser"}


def who_proper(origin: str | None, capital: bool = False) -> str:
    name = WHO_PROPER.get(origin or "session", f"the {who(origin)}")
    return name[0].upper() + name[1:] if capital else name


def display_path(path: str | None, cwd: str | None = None) -> str:
    """Paths relative to the working directory when they are under it: shorter, and
    the same on every machine (snapshots and screenshots depend on it)."""
    if not path:
        return "<no source>"
    base = cwd or os.getcwd()
    try:
        rel = os.path.relpath(path, base)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def breakpoint_glyph(bp: Breakpoint) -> str:
    """Readable without colour: ● plain, ◆ conditional, ▲ logpoint; hollow when disabled."""
    spec = bp.spec
    if spec.log_message:
        return "▲" if spec.enabled else "△"
    if spec.condition or spec.hit_condition:
        return "◆" if spec.enabled else "◇"
    return "●" if spec.enabled else "○"


def breakpoint_detail(bp: Breakpoint) -> str:
    spec = bp.spec
    parts = []
    if spec.condition:
        parts.append(f"if {spec.condition}")
    if spec.hit_condition:
        parts.append(f"hit {spec.hit_condition}")
    if spec.log_message:
        parts.append(f"log {spec.log_message}")
    if not spec.enabled:
        parts.append("disabled")
    if not bp.verified:
        parts.append("unverified")
    return ", ".join(parts)


def one_line(text: str, limit: int = 200) -> str:
    text = text.replace("\r", "").replace("\n", "⏎")
    return text if len(text) <= limit else text[: limit - 1] + "…"
