"""Textual's parsed CSS, kept from one start of the TUI for the next.

Each start parses the CSS of every widget class it mounts (their DEFAULT_CSS
and ours): ~16-30 ms of the TUI's CPU before its first screen, the same
rules every time. The rules of the first screen are kept in the user's
runtime directory (0700, tui_debugger.paths), keyed by the CSS text, where
it is read from and the theme's variables (which the parse substitutes), and
are used while Textual, Python, this package and the variables are the ones
they were parsed with. A file that is not a regular file of this user's,
open to others, or damaged, is not used: the CSS is parsed and the file
written anew. A theme changed while the app runs makes Textual a stylesheet
of its own, which parses as it always did.
"""

import os
import pickle
import stat
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

FILE = "css-rules.pickle"


def _version() -> str:
    import textual

    from .. import __version__

    return f"textual {textual.__version__}; tui-debugger {__version__}; python {sys.version}"


class ParsedCss:
    """The rules kept for one app's stylesheet (`install`), and the ones it
    used, written for the next start (`save`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.version = _version()
        #: the rules kept, and the variables they were parsed with
        self._stored: dict[tuple[Any, ...], Any] = {}
        self._stored_variables: dict[str, str] | None = None
        #: what this start parsed or took, for the next, and its variables
        self._used: dict[tuple[Any, ...], Any] = {}
        self._used_variables: dict[str, str] | None = None
        self._missed = False
        self._saved = False

    def load(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return
        try:
            found = os.fstat(fd)
            if (not stat.S_ISREG(found.st_mode) or found.st_uid != os.getuid()
                    or found.st_mode & 0o077):
                return
            with os.fdopen(fd, "rb") as kept:
                fd = -1
                data = pickle.load(kept)
        except Exception:  # damaged, cut short, of another version of a library: parsed anew
            return
        finally:
            if fd >= 0:
                os.close(fd)
        if (isinstance(data, dict) and data.get("version") == self.version
                and isinstance(data.get("variables"), dict) and isinstance(data.get("rules"), dict)):
            self._stored_variables = data["variables"]
            self._stored = data["rules"]

    def install(self, stylesheet: Any) -> None:
        """Answer `stylesheet`'s parses from the kept rules where they fit."""
        parse = stylesheet._parse_rules
        seen: Any = None  # the variables last compared with the kept ones
        fits = False

        def parse_rules(css: str, read_from: Any, is_default_rules: bool = False,
                        tie_breaker: int = 0, scope: str = "") -> Any:
            nonlocal seen, fits
            key = (css, read_from, is_default_rules, tie_breaker, scope)
            variables = stylesheet._variables
            if variables is not seen:
                seen, fits = variables, variables == self._stored_variables
                if variables != self._used_variables:  # the first parse, or a theme set since
                    self._used, self._used_variables = {}, dict(variables)
            rules = self._stored.get(key) if fits else None
            if rules is None:
                rules = parse(css, read_from, is_default_rules, tie_breaker, scope)
                self._missed = True
            else:
                stylesheet._parse_cache[key] = rules
            self._used[key] = rules
            return rules

        stylesheet._parse_rules = parse_rules

    def save(self, background: bool = True) -> None:
        """Keep what this start parsed, for the next (`background`: in a
        thread, the pickle being ~100 KB). Once a start; nothing to do when
        every rule was kept."""
        if self._saved or not self._missed or self._used_variables is None:
            return
        self._saved = True
        data = {"version": self.version, "variables": self._used_variables,
                "rules": dict(self._used)}
        if background:
            threading.Thread(target=self._write, args=(data,), name="css-cache", daemon=True).start()
        else:
            self._write(data)

    def _write(self, data: dict[str, Any]) -> None:
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".css-rules.", suffix=".tmp")
            with os.fdopen(fd, "wb") as out:  # mkstemp's mode: 0600
                pickle.dump(data, out, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path)
            tmp = None
        except Exception:  # a full disk, a directory gone: the next start parses, as before
            pass
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass


def kept_for(stylesheet: Any) -> ParsedCss | None:
    """The kept rules installed on `stylesheet`, or None where the runtime
    directory cannot be had (the app then parses as Textual does)."""
    from .. import paths

    try:
        cache = ParsedCss(paths.runtime_dir() / FILE)
    except Exception:
        return None
    cache.load()
    cache.install(stylesheet)
    return cache
