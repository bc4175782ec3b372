"""Textual's parsed CSS kept from one start of the TUI for the next
(tui/css_cache.py): the next start parses none of its first screen's CSS
and looks the same; a kept file that is damaged, another user's or open to
others is not used."""

from __future__ import annotations

import os

import textual.css.stylesheet as stylesheet_module

from tests.support.tui import source_row, wait_until
from tui_debugger import paths
from tui_debugger.tui import app as app_module
from tui_debugger.tui import css_cache
from tui_debugger.tui.app import create_app


def _counting_parses(monkeypatch) -> list[str]:
    """Each CSS source Textual parses from now on (not answered by a cache)."""
    parsed: list[str] = []
    real = stylesheet_module.parse

    def parse(scope, css, read_from, *args, **kwargs):
        parsed.append(str(read_from))
        return real(scope, css, read_from, *args, **kwargs)

    monkeypatch.setattr(stylesheet_module, "parse", parse)
    return parsed


async def _start(size=(120, 40)) -> tuple[list[str], set[str]]:
    """A `run` to its entry stop; the rows of its screen."""
    app = create_app("launch", {"program": "examples/inventory.py", "stop_on_entry": True}, None)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: app.stop_shown, what="the entry stop")
        await wait_until(pilot, lambda: app.variables.filled > 0, what="the variables")
        await wait_until(pilot, lambda: app.query("FooterKey"), what="the key bar's keys")
        row = source_row(app, 1)
        rules = set(app.stylesheet.rules_map)
        kept = app._css_kept
        assert kept is not None
        kept.save()
        await wait_until(pilot, lambda: (paths.runtime_dir() / css_cache.FILE).exists()
                         or not kept._missed, what="the parsed CSS written")
        await app.action_quit()
    return [row], rules


async def test_the_next_start_parses_none_of_its_first_screens_css(monkeypatch):
    monkeypatch.setattr(app_module, "CSS_KEPT_AFTER", 600.0)  # written when the test says
    parsed = _counting_parses(monkeypatch)
    kept = paths.runtime_dir() / css_cache.FILE
    first_rows, first_rules = await _start()
    assert len(parsed) > 10, parsed  # every widget class's CSS, and ours
    assert kept.exists() and (kept.stat().st_mode & 0o777) == 0o600
    parsed.clear()
    rows, rules = await _start()
    assert parsed == [], parsed
    assert rows == first_rows
    assert rules == first_rules, rules ^ first_rules


async def test_a_damaged_or_foreign_kept_file_is_parsed_anew(monkeypatch):
    monkeypatch.setattr(app_module, "CSS_KEPT_AFTER", 600.0)
    parsed = _counting_parses(monkeypatch)
    kept = paths.runtime_dir() / css_cache.FILE
    await _start()
    good = kept.read_bytes()

    # Damaged (cut short): parsed as without it, and written whole again.
    kept.write_bytes(good[: len(good) // 2])
    parsed.clear()
    await _start()
    assert len(parsed) > 10
    assert kept.read_bytes() != good[: len(good) // 2]
    parsed.clear()
    await _start()
    assert parsed == []

    # Open to others (another user could have written it): not read.
    os.chmod(kept, 0o666)
    parsed.clear()
    await _start()
    assert len(parsed) > 10

    # A symbolic link in its place: not followed.
    kept.unlink()
    target = kept.with_name("elsewhere")
    target.write_bytes(good)
    kept.symlink_to(target)
    parsed.clear()
    await _start()
    assert len(parsed) > 10
