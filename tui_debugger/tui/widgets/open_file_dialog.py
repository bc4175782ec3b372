"""Ctrl+O: open any file in the source pane: a path typed in (absolute, or
relative to the working directory), or one of the project's files by a fuzzy
match of its path (as the palette matches commands). The app gives the
candidates: the files on the stack first, then the project's files (`git
ls-files` in a repository), then the program's directory tree."""

from __future__ import annotations

import os
import subprocess

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.fuzzy import Matcher
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option
from .text_input import TextInput

#: Shown at once; typing narrows. More would only slow the list down.
MAX_SHOWN = 200
#: Directories never worth opening a source from.
SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox",
             ".mypy_cache", ".pytest_cache", ".ruff_cache", "dist", "build", ".idea", ".vscode"}
#: Files that are not source (binaries, archives, images).
SKIP_SUFFIXES = {".pyc", ".pyo", ".o", ".a", ".so", ".dylib", ".dll", ".exe", ".png", ".jpg",
                 ".jpeg", ".gif", ".svg", ".zip", ".gz", ".tar", ".whl", ".pdf", ".core"}


def program_files(root: str, limit: int = 20_000) -> list[str]:
    """Source-looking files under `root`, hidden and build directories left out,
    at most `limit` of them (a home directory must not stall the dialog)."""
    found: list[str] = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.startswith(".") or os.path.splitext(name)[1].lower() in SKIP_SUFFIXES:
                continue
            found.append(os.path.join(directory, name))
            if len(found) >= limit:
                return found
    return found


def project_files(directory: str, limit: int = 20_000) -> list[str]:
    """The files of the git repository `directory` is in (tracked, and new ones
    not ignored), as absolute paths; [] outside a repository or without git."""
    try:
        top = subprocess.run(["git", "-C", directory, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, timeout=5)
        if top.returncode != 0:
            return []
        root = top.stdout.strip()
        listed = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others",
                                 "--exclude-standard", "-z"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return []
    found = []
    for name in listed.stdout.decode(errors="replace").split("\0"):
        if name and os.path.splitext(name)[1].lower() not in SKIP_SUFFIXES:
            found.append(os.path.join(root, name))
            if len(found) >= limit:
                break
    return found


class OpenFileDialog(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel", show=False),
                Binding("down", "move(1)", show=False), Binding("up", "move(-1)", show=False)]

    def __init__(self, candidates: list[tuple[str, str]], cwd: str | None = None) -> None:
        """candidates: (path, what to show), in the order to offer them; a typed
        path is relative to `cwd`."""
        super().__init__()
        self.candidates = candidates
        self.cwd = cwd or os.getcwd()

    def compose(self) -> ComposeResult:
        with Vertical(id="open-body"):
            yield Static("Open a file  (type to narrow, Enter opens, Esc cancels)", id="open-title")
            yield TextInput(placeholder="part of a file name, or a path", id="open-input")
            yield OptionList(id="open-list")

    def on_mount(self) -> None:
        self._fill("")
        self.query_one(Input).focus()

    def typed_file(self, query: str) -> str | None:
        """The file the text names as a path (absolute, ~, or relative to the cwd)."""
        if not query:
            return None
        path = os.path.normpath(os.path.join(self.cwd, os.path.expanduser(query)))
        return path if os.path.isfile(path) else None

    def _fill(self, query: str) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        typed = self.typed_file(query)
        if query:
            matcher = Matcher(query)
            scored = [(matcher.match(shown), path, shown) for path, shown in self.candidates]
            ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: -s[0])[:MAX_SHOWN]
            items = [Option(matcher.highlight(shown), id=path) for _, path, shown in ranked
                     if path != typed]
            if typed is not None:
                items.insert(0, Option(Text(query, style="bold"), id=typed))
        else:
            items = [Option(Text(shown), id=path) for path, shown in self.candidates[:MAX_SHOWN]]
        options.add_options(items)
        if items:
            options.highlighted = 0
        self.query_one("#open-title", Static).update(
            "Open a file  (type to narrow, Enter opens, Esc cancels)" if items or not query
            else f"No file matches {query!r}")

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._fill(event.value.strip())

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        options = self.query_one(OptionList)
        if options.highlighted is not None and options.option_count:
            self.dismiss(options.get_option_at_index(options.highlighted).id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_move(self, delta: int) -> None:
        options = self.query_one(OptionList)
        if options.option_count:
            current = options.highlighted or 0
            options.highlighted = min(max(0, current + delta), options.option_count - 1)

    def action_cancel(self) -> None:
        self.dismiss(None)
