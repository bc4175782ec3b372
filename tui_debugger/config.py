"""Settings: defaults, overridden by the config file, then by environment
variables with the TUI_DEBUGGER_ prefix, then by command arguments.

The sources are merged here (`load_settings`) and validated by one pydantic
model, as pydantic-settings merged them before: names matched without regard
to case, a table or list setting read from its variable as JSON, tables
merged key by key (a file's keymap and the environment's together). Without
pydantic-settings, which every process that reads the settings (the host,
the TUI, the full command line) paid 35-40 ms to import, and whose error for
a variable that is not JSON was a traceback.

The file is TOML at the platform's config location (XDG on Linux:
~/.config/tui-debugger/config.toml), or wherever TUI_DEBUGGER_CONFIG points.
docs/configuration.md lists every setting with its default, env var and key.

Adapter paths from the file reach the backends through the environment
(TUI_DEBUGGER_<NAME>_PATH, which backends.adapters reads): `apply_config()`
exports them at start-up unless the variable is already set, so the env var
still wins, child processes (the headless host) inherit them, and the
backends never import this package.
"""

import json
import os
import re
import shlex
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Literal, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from backends.errors import InvalidInput
from backends.models import empty_list

ENV_PREFIX = "TUI_DEBUGGER_"
ENV_CONFIG = "TUI_DEBUGGER_CONFIG"
APP_NAME = "tui-debugger"
DEFAULT_THEME = "textual-dark"

#: adapter name -> the env var stem backends.adapters reads for its path
#: (lldb-cli drives the `lldb` executable, hence TUI_DEBUGGER_LLDB_PATH).
ADAPTER_PATH_KEYS = {"lldb-dap": "LLDB_DAP", "lldb-cli": "LLDB", "dlv": "DLV", "node": "NODE"}
ADAPTER_NAMES = ["debugpy", "lldb-dap", "lldb-cli", "dlv", "node"]

_KEY_MODIFIERS = {"ctrl", "shift", "alt", "meta", "super", "hyper"}
_KEY_NAME = re.compile(r"^[a-z0-9_]+$|^[^\s+,]$")


class ConfigError(InvalidInput):
    """A setting with a bad value, an unknown key, or a config file that is not TOML."""


def config_path() -> Path:
    override = os.environ.get(ENV_CONFIG)
    if override:
        return Path(os.path.expanduser(override))
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


class AdapterSettings(BaseModel):
    """[adapters.NAME] in the file."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(None, description="the debugger executable")
    args: list[str] = Field(default_factory=empty_list, description="extra arguments for it")

    @field_validator("args", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return shlex.split(value) if isinstance(value, str) else value


class Settings(BaseModel):
    model_config = ConfigDict(extra="ignore", validate_default=True)

    # run control and waiting
    step_wait_ms: int = Field(5_000, ge=0, description="how long next/step/finish wait for the stop")
    continue_wait_ms: int = Field(10_000, ge=0, description="how long continue waits for the next stop")
    await_timeout_ms: int = Field(30_000, ge=0, description="default timeout of await / debug_wait")
    # answer sizes
    max_value_chars: int = Field(1_000, ge=20, description="longest value shown before it is cut")
    max_items: int = Field(100, ge=1, description="children listed at once")
    max_result_chars: int = Field(20_000, ge=1_000, description="largest answer to an agent")
    context_lines: int = Field(5, ge=0, description="source lines shown around the current line")
    mcp_text: Literal["short", "full"] = Field(
        "short", description="the text beside an MCP answer's structuredContent: one short "
        "line (the data is in structuredContent), or the full rendering for clients that "
        "read only the text")
    # output buffer
    output_max_entries: int = Field(10_000, ge=10, description="output entries kept per session")
    output_max_bytes: int = Field(4 * 1024 * 1024, ge=1024, description="output bytes kept per session")
    # privacy
    redact: bool = Field(True, description="hide bearer tokens, keys and passwords in output and values")
    # headless sessions
    idle_timeout_s: int = Field(1_800, ge=0, description="a headless session ends after this long unused (0: never)")
    linger_s: int = Field(30, ge=0, description="a headless session's host stays this long after its program ends")
    warm: bool = Field(True, description="a session's host stays, warm, after its session "
                       "ends, to start the next session sooner (TUI_DEBUGGER_WARM=0: off)")
    warm_idle_s: int = Field(600, ge=0, description="how long a warm host waits for the next "
                             "session before it ends (0: no warm host)")
    orphan_grace_s: int = Field(10, ge=0, description="a session whose TUI was killed outright ends "
                                "this long after, unless a client (`tui-debugger ui`) joins it")
    # breakpoints
    persist_breakpoints: bool = Field(True, description="save breakpoints per project and restore them")
    state_dir: str | None = Field(None, description="where saved breakpoints live")
    # adapters
    adapter: str | None = Field(None, description="adapter used when none is given")
    adapters: dict[str, AdapterSettings] = Field(default_factory=dict,
                                                 description="per adapter: path and args")
    # TUI
    keymap: dict[str, str] = Field(default_factory=dict, description="command id -> key(s)")
    theme: str = Field(DEFAULT_THEME, description="Textual theme")

    @field_validator("adapter")
    @classmethod
    def _adapter(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        from backends.adapters import canonical_name

        try:
            return canonical_name(value)
        except InvalidInput:
            raise ValueError(f"unknown adapter {value!r}; allowed: {', '.join(ADAPTER_NAMES)}") from None

    @field_validator("adapters", mode="before")
    @classmethod
    def _adapter_names(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out = {}
        for name, entry in value.items():
            key = str(name).lower().replace("_", "-")
            if key not in ADAPTER_NAMES:
                raise ValueError(f"unknown adapter {name!r}; allowed: {', '.join(ADAPTER_NAMES)}")
            out[key] = entry
        return out

    @field_validator("adapters")
    @classmethod
    def _debugpy_has_no_path(cls, value: dict[str, AdapterSettings]) -> dict[str, AdapterSettings]:
        if "debugpy" in value and value["debugpy"].path:
            raise ValueError("debugpy runs inside this Python and takes no path; allowed keys "
                             "for debugpy: args")
        return value

    @field_validator("keymap")
    @classmethod
    def _keys(cls, value: dict[str, str]) -> dict[str, str]:
        for command_id, keys in value.items():
            problem = key_problem(keys)
            if problem:
                raise ValueError(f"{command_id} = {keys!r}: {problem}")
        return value

    @field_validator("theme")
    @classmethod
    def _theme(cls, value: str) -> str:
        if value == DEFAULT_THEME:
            return value
        themes = available_themes()
        if value not in themes:
            raise ValueError(f"unknown theme {value!r}; allowed: {', '.join(themes)}")
        return value


def key_problem(keys: str) -> str | None:
    """Why a key binding is malformed (Textual's form: 'f5', 'ctrl+shift+f5', 'f5,ctrl+r')."""
    if not isinstance(keys, str) or not keys.strip():
        return "give a key such as 'f5' or 'ctrl+n'"
    for key in keys.split(","):
        parts = key.strip().lower().split("+")
        *mods, name = parts
        bad_mods = [m for m in mods if m not in _KEY_MODIFIERS]
        if bad_mods:
            return (f"unknown modifier {bad_mods[0]!r}; allowed modifiers: "
                    f"{', '.join(sorted(_KEY_MODIFIERS))}")
        if not name or not _KEY_NAME.match(name):
            return f"{key.strip()!r} is not a key; write keys as 'f5', 'n', 'ctrl+n', 'shift+f11'"
    return None


def available_themes() -> list[str]:
    try:
        from textual.theme import BUILTIN_THEMES
    except ImportError:  # pragma: no cover - textual is a dependency
        return [DEFAULT_THEME]
    return list(BUILTIN_THEMES)


def read_config_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    import tomllib  # only when there is a file: 2 ms of every process's start

    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"The config file {path} is not valid TOML: {exc}. Fix it, or point "
                          f"{ENV_CONFIG} at another file.", file=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"Cannot read the config file {path}: {exc}.", file=str(path)) from None
    known = set(Settings.model_fields)
    unknown = [k for k in data if k not in known]
    if unknown:
        raise ConfigError(
            f"The config file {path} has an unknown setting {unknown[0]!r}. Settings: "
            f"{', '.join(sorted(known))}.", key=unknown[0], file=str(path), valid=sorted(known),
        )
    return data


def _allowed(field_name: str) -> str:
    field = Settings.model_fields.get(field_name)
    if field is None:
        return ""
    if field.annotation is bool:
        return "true or false"
    if field.annotation is int:
        low = next((m.ge for m in field.metadata if getattr(m, "ge", None) is not None), None)
        return f"a whole number >= {low}" if low is not None else "a whole number"
    if field_name == "keymap":
        return "a table of command id = \"key\""
    if field_name == "adapters":
        return f"tables [adapters.NAME] with path and args, NAME one of {', '.join(ADAPTER_NAMES)}"
    return ""


def _explain(exc: ValidationError) -> ConfigError:
    problems = []
    first_key = None
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        key = loc[0] if loc else "?"
        first_key = first_key or key
        env_name = ENV_PREFIX + key.upper()
        where = f"env {env_name}" if env_name in os.environ else f"{config_path()}"
        msg = err["msg"].removeprefix("Value error, ")
        allowed = _allowed(key)
        if err["type"] == "extra_forbidden" and key == "adapters":
            msg, allowed = f"unknown key {loc[-1]!r}", "path, args"
            loc = loc[:-1]
        if allowed and "allowed" not in msg:
            msg += f"; allowed: {allowed}"
        got = err.get("input")
        shown = "" if isinstance(got, dict) or got is None or err["type"] == "extra_forbidden" \
            else f" (got {got!r})"
        problems.append(f"{'.'.join(loc)}{shown} in {where}: {msg}")
    return ConfigError(
        "Bad setting: " + "; ".join(problems) + ". Fix it, or unset it to use the default.",
        key=first_key, problems=problems,
    )


def _env_values() -> dict[str, Any]:
    """The settings the environment gives (TUI_DEBUGGER_<KEY>, any case): a
    table or list setting as JSON, any other as its text for the model to read."""
    environ = {name.lower(): value for name, value in os.environ.items()}
    values: dict[str, Any] = {}
    for name, field in Settings.model_fields.items():
        env_name = ENV_PREFIX + name.upper()
        raw = environ.get(env_name.lower())
        if raw is None:
            continue
        if get_origin(field.annotation) in (dict, list):
            try:
                values[name] = json.loads(raw)
            except ValueError as exc:
                example = '\'{"next": "f8"}\'' if name == "keymap" else \
                    '\'{"lldb-dap": {"path": "/usr/bin/lldb-dap-19"}}\''
                raise ConfigError(
                    f"Bad setting: {name} in env {env_name}: not JSON ({exc}); write it as "
                    f"JSON, e.g. {env_name}={example}. Fix it, or unset it to use the "
                    "default.", key=name) from None
        else:
            values[name] = raw
    return values


def merged_tables(*layers: dict[str, Any]) -> dict[str, Any]:
    """Later layers over earlier ones; tables merged key by key (also a launch
    configuration's platform overrides, launch_json.py)."""
    out: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if isinstance(value, dict) and isinstance(out.get(key), dict):
                out[key] = merged_tables(out[key], value)
            else:
                out[key] = value
    return out


def load_settings(**overrides: Any) -> Settings:
    """Settings from the file, then the environment, then `overrides` (command
    arguments). Raises ConfigError."""
    values = merged_tables(read_config_file(config_path()), _env_values(), overrides)
    try:
        return Settings(**values)
    except ValidationError as exc:
        raise _explain(exc) from None


@lru_cache(maxsize=1)
def settings() -> Settings:
    return load_settings()


def reload_settings() -> Settings:
    settings.cache_clear()
    return settings()


def apply_config() -> Settings:
    """Load and check the settings once at start-up, and hand the adapter
    settings to the backends through the environment. Raises ConfigError."""
    cfg = settings()
    for name, entry in cfg.adapters.items():
        stem = ADAPTER_PATH_KEYS.get(name)
        if stem and entry.path and not os.environ.get(f"{ENV_PREFIX}{stem}_PATH"):
            os.environ[f"{ENV_PREFIX}{stem}_PATH"] = os.path.expanduser(entry.path)
        args_key = f"{ENV_PREFIX}{name.upper().replace('-', '_')}_ARGS"
        if entry.args and not os.environ.get(args_key):
            os.environ[args_key] = shlex.join(entry.args)
    if cfg.adapter and not os.environ.get(ENV_PREFIX + "ADAPTER"):
        os.environ[ENV_PREFIX + "ADAPTER"] = cfg.adapter
    return cfg


def check_keymap(keymap: dict[str, str], actions: Iterable[str]) -> None:
    """For the TUI, which knows every bindable action: a keymap entry naming
    no action is a ConfigError listing the allowed ids."""
    known = sorted(set(actions))
    for command_id in keymap:
        if command_id not in known:
            raise ConfigError(
                f"keymap: {command_id!r} is not a command or action; allowed: {', '.join(known)}.",
                key=f"keymap.{command_id}", valid=known,
            )


def describe_settings() -> list[dict[str, Any]]:
    """Every setting: key, env var, default, description (for docs and `--json`)."""
    out = []
    for name, field in Settings.model_fields.items():
        default = field.get_default(call_default_factory=True)
        out.append({"key": name, "env": ENV_PREFIX + name.upper(),
                    "default": json.loads(json.dumps(default, default=str)),
                    "description": field.description or ""})
    return out
