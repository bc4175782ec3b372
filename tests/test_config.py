"""Settings: default < config file < env var < command argument; bad values
reported with their key and the allowed values."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from backends import adapters
from tui_debugger.config import (
    ConfigError,
    Settings,
    apply_config,
    check_keymap,
    config_path,
    load_settings,
    reload_settings,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch) -> Path:
    path = tmp_path / "config.toml"
    monkeypatch.setenv("TUI_DEBUGGER_CONFIG", str(path))
    return path


def test_defaults_without_a_file(config_file: Path, monkeypatch):
    assert not config_file.exists()
    monkeypatch.delenv("TUI_DEBUGGER_WARM")  # the suite's isolation turns warm hosts off
    cfg = reload_settings()
    # (the suite's isolation gives every test its state directory through the env)
    assert cfg.model_dump(exclude={"state_dir"}) == Settings().model_dump(exclude={"state_dir"})
    assert cfg.state_dir == os.environ.get("TUI_DEBUGGER_STATE_DIR")
    assert (cfg.step_wait_ms, cfg.redact, cfg.theme, cfg.keymap) == (5000, True, "textual-dark", {})


def test_the_default_location_is_the_platform_config_dir(monkeypatch, tmp_path: Path):
    monkeypatch.delenv("TUI_DEBUGGER_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert config_path() == tmp_path / "xdg" / "tui-debugger" / "config.toml"
    else:
        assert config_path().name == "config.toml"


def test_precedence_argument_over_env_over_file_over_default(config_file: Path, monkeypatch):
    config_file.write_text(
        "step_wait_ms = 111\ncontinue_wait_ms = 222\nredact = false\ntheme = \"nord\"\n"
        "[keymap]\ncontinue = \"f8\"\nnext = \"f10\"\n"
    )
    monkeypatch.setenv("TUI_DEBUGGER_CONTINUE_WAIT_MS", "333")
    monkeypatch.setenv("TUI_DEBUGGER_KEYMAP", '{"next": "ctrl+n"}')
    cfg = reload_settings()
    assert cfg.await_timeout_ms == 30_000  # default
    assert cfg.step_wait_ms == 111  # file
    assert cfg.continue_wait_ms == 333  # env over file
    assert (cfg.redact, cfg.theme) == (False, "nord")
    assert cfg.keymap == {"continue": "f8", "next": "ctrl+n"}  # merged, env wins per key
    with_arg = load_settings(continue_wait_ms=444, step_wait_ms=555)
    assert (with_arg.continue_wait_ms, with_arg.step_wait_ms) == (444, 555)  # argument over all


@pytest.mark.parametrize("text, expected", [
    ('redact = "maybe"', r"redact \(got 'maybe'\) in .*config\.toml: .*allowed: true or false"),
    ("step_wait_ms = -5", r"step_wait_ms \(got -5\) in .*: .*greater than or equal to 0.*allowed: a whole number >= 0"),
    ('theme = "neon"', r"theme \(got 'neon'\) .*unknown theme 'neon'; allowed: textual-dark, textual-light, nord"),
    ('adapter = "gdb"', r"adapter \(got 'gdb'\).*allowed: debugpy, lldb-dap, lldb-cli, dlv, node"),
    ('[keymap]\ncontinue = "hyperspace+x"', r"keymap.*continue = 'hyperspace\+x': unknown modifier 'hyperspace'; allowed modifiers: alt, ctrl"),
    ('[adapters.gdb]\npath = "/usr/bin/gdb"', r"unknown adapter 'gdb'; allowed: debugpy, lldb-dap"),
    ('[adapters.dlv]\npaht = "/usr/bin/dlv"', r"adapters\.dlv in .*: unknown key 'paht'; allowed: path, args"),
    ("redcat = true", r"unknown setting 'redcat'\. Settings: adapter, adapters, await_timeout_ms"),
    ("step_wait_ms = ", r"is not valid TOML: .*line 1"),
])
def test_a_bad_value_names_its_key_and_the_allowed_values(config_file: Path, text, expected):
    config_file.write_text(text + "\n")
    with pytest.raises(ConfigError) as err:
        reload_settings()
    assert re.search(expected, err.value.message), err.value.message


def test_a_bad_env_var_is_named_as_such(config_file: Path, monkeypatch):
    monkeypatch.setenv("TUI_DEBUGGER_MAX_ITEMS", "lots")
    with pytest.raises(ConfigError, match=r"max_items \(got 'lots'\) in env TUI_DEBUGGER_MAX_ITEMS"):
        reload_settings()


def test_a_table_setting_from_the_env_is_json_and_any_case_names_it(config_file: Path,
                                                                     monkeypatch):
    """A table setting's variable is read as JSON: one that is not JSON says so,
    with an example, rather than a traceback (pydantic-settings' SettingsError
    reached the user whole). Names are matched in any case, as before."""
    monkeypatch.setenv("TUI_DEBUGGER_KEYMAP", "next=f8")
    with pytest.raises(ConfigError, match=r"keymap in env TUI_DEBUGGER_KEYMAP: not JSON .*"
                       r"e\.g\. TUI_DEBUGGER_KEYMAP='\{\"next\": \"f8\"\}'"):
        reload_settings()
    monkeypatch.delenv("TUI_DEBUGGER_KEYMAP")
    monkeypatch.setenv("tui_debugger_adapters", '{"dlv": {"args": "--log"}}')
    monkeypatch.setenv("TUI_DEBUGGER_REDACT", "0")
    cfg = reload_settings()
    assert cfg.adapters["dlv"].args == ["--log"] and cfg.redact is False
    env = {**os.environ, "TUI_DEBUGGER_KEYMAP": "{nope", "TUI_DEBUGGER_CONFIG": str(config_file)}
    proc = subprocess.run([sys.executable, "-m", "tui_debugger", "sessions"], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("error: Bad setting: keymap in env TUI_DEBUGGER_KEYMAP: not JSON")


def test_the_cli_reports_a_broken_config_without_a_traceback(config_file: Path):
    config_file.write_text('redact = "sometimes"\n')
    env = {**os.environ, "TUI_DEBUGGER_CONFIG": str(config_file)}
    proc = subprocess.run([sys.executable, "-m", "tui_debugger", "sessions"], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=60)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: Bad setting: redact (got 'sometimes')")
    assert "allowed: true or false" in proc.stderr


def test_adapter_paths_from_the_file_reach_discovery_unless_the_env_var_is_set(
        config_file: Path, tmp_path: Path, monkeypatch):
    fake_dlv = tmp_path / "bin" / "my-dlv"
    fake_dlv.parent.mkdir()
    fake_dlv.write_text("#!/bin/sh\necho 'Version: 9.9.9'\n")
    fake_dlv.chmod(0o755)
    config_file.write_text(f'[adapters.dlv]\npath = "{fake_dlv}"\nargs = "--log --log-output=dap"\n')
    for key in ("TUI_DEBUGGER_DLV_PATH", "TUI_DEBUGGER_DLV_ARGS"):
        # setenv first so monkeypatch records the original (unset) value and restores
        # it, whatever apply_config writes into os.environ meanwhile.
        monkeypatch.setenv(key, "")
        monkeypatch.delenv(key)
    reload_settings()
    apply_config()
    assert adapters.find_dlv() == str(fake_dlv)
    assert adapters.adapter_args("dlv") == ["--log", "--log-output=dap"]

    other = tmp_path / "bin" / "env-dlv"
    other.write_text(fake_dlv.read_text())
    other.chmod(0o755)
    monkeypatch.setenv("TUI_DEBUGGER_DLV_PATH", str(other))
    apply_config()
    assert adapters.find_dlv() == str(other)  # env var over file


def test_output_limits_reach_new_sessions(config_file: Path, monkeypatch):
    from tui_debugger.host.hub import Hub

    config_file.write_text("output_max_entries = 50\n")
    monkeypatch.setenv("TUI_DEBUGGER_OUTPUT_MAX_BYTES", "4096")
    reload_settings()

    async def make():
        hub = Hub(serve=False)
        session = await hub.create_session("limits")
        await hub.close_all()
        return session

    import asyncio

    session = asyncio.run(make())
    assert (session.output.max_entries, session.output.max_bytes) == (50, 4096)


def test_keymap_ids_are_checked_against_the_tuis_actions():
    check_keymap({"continue": "f8"}, ["continue", "next"])
    with pytest.raises(ConfigError, match=r"'contine' is not a command or action; allowed: continue, next"):
        check_keymap({"contine": "f8"}, ["continue", "next"])


def test_every_setting_is_documented_with_its_env_var_and_default():
    doc = (ROOT / "docs" / "configuration.md").read_text()
    for name, field in Settings.model_fields.items():
        row = next((line for line in doc.splitlines() if line.startswith(f"| `{name}` |")), None)
        assert row is not None, f"{name} is not in docs/configuration.md"
        assert f"TUI_DEBUGGER_{name.upper()}" in row
        default = field.get_default(call_default_factory=True)
        if isinstance(default, (bool, int)) or (isinstance(default, str) and default):
            shown = json.dumps(default) if isinstance(default, bool) else str(default)
            assert f"`{shown}`" in row, f"{name}: default {shown} not in its row"


def test_through_a_session_env_over_file_and_argument_over_env(
        config_file: Path, tmp_path: Path, monkeypatch, capsys, no_leftover_processes):
    """context_lines: the file says 3, the env var 1, `context --lines 0` wins over both."""
    from tui_debugger.cli.main import main

    config_file.write_text("context_lines = 3\n")
    monkeypatch.setenv("TUI_DEBUGGER_CONTEXT_LINES", "1")
    program = tmp_path / "app.py"
    program.write_text("".join(f"x{i} = {i}\n" for i in range(12)))
    monkeypatch.chdir(tmp_path)

    def cli(*argv: str) -> str:
        code = main(list(argv))
        out = capsys.readouterr()
        assert code == 0, f"{argv} -> {code}: {out.out}{out.err}"
        return out.out

    def shown_lines(*extra: str) -> list[int]:
        return [s["line"] for s in json.loads(cli("context", *extra, "--json"))["source"]]

    cli("start", "--break", "app.py:7", "app.py")
    try:
        cli("await", "--timeout", "20")
        assert shown_lines() == [6, 7, 8]  # the session's host: env over file
        assert shown_lines("--lines", "0") == [7]  # argument over env
        assert shown_lines("--lines", "2") == [5, 6, 7, 8, 9]
    finally:
        cli("stop")
