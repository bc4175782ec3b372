"""VS Code launch configurations (`.vscode/launch.json`) as launch or attach
requests for our adapters.

The file is JSON with comments and trailing commas. A configuration's `type`
picks the adapter; its variables are resolved here; fields an adapter reads
are passed to it through `extra`; a field we cannot honour is an error when
the launch would be wrong without it, and a warning when it only changes how
VS Code itself behaves. docs/configuration.md lists every decision.
"""

import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from backends.errors import InvalidInput
from backends.models import empty_list

from .config import merged_tables

LAUNCH_JSON = os.path.join(".vscode", "launch.json")

#: VS Code `type` -> our adapter. `lldb` is CodeLLDB's type and `cppdbg` the
#: C/C++ extension's (gdb/lldb through MI): both debug native programs, which
#: lldb-dap does here; their fields that lldb-dap does not read are warned about.
TYPE_TO_ADAPTER = {
    "debugpy": "debugpy",
    "python": "debugpy",
    "lldb-dap": "lldb-dap",
    "lldb-vscode": "lldb-dap",
    "lldb": "lldb-dap",
    "cppdbg": "lldb-dap",
    "go": "dlv",
    "node": "node",
    "pwa-node": "node",
    "node2": "node",
}

UNSUPPORTED_TYPES = {
    "cppvsdbg": "it is the Visual Studio (Windows) debugger; use a configuration of type "
    "lldb-dap or cppdbg for this program",
    "chrome": "browser debugging is not supported; the node backend debugs Node.js programs",
    "pwa-chrome": "browser debugging is not supported; the node backend debugs Node.js programs",
    "msedge": "browser debugging is not supported; the node backend debugs Node.js programs",
    "pwa-msedge": "browser debugging is not supported; the node backend debugs Node.js programs",
    "node-terminal": "it runs a command in VS Code's terminal; use a configuration of type node "
    "with a program",
    "extensionHost": "it debugs VS Code extensions inside VS Code",
}

# Fields that only steer VS Code's own UI: ignored without a word.
_VSCODE_UI_FIELDS = {"presentation", "internalConsoleOptions", "hidden", "$schema", "purpose",
                     "linux", "osx", "windows", "comments", "description"}

# Fields VS Code acts on before or after the adapter runs: ignored with a warning.
_VSCODE_ACTIONS = {
    "preLaunchTask": "VS Code tasks are not run; run it yourself before launching",
    "postDebugTask": "VS Code tasks are not run; run it yourself after the session",
    "serverReadyAction": "it opens a browser from VS Code; open it yourself",
    "debugServer": "it points VS Code at an adapter it did not start; we start the adapter",
}

# Fields this module turns into LaunchConfig fields, per request kind.
_COMMON_FIELDS = {"name", "type", "request", "program", "args", "cwd", "env", "envFile",
                  "stopOnEntry"}
_ATTACH_FIELDS = {"processId", "pid", "port", "host", "address", "connect", "waitFor"}

# Fields lldb-dap reads (besides the common ones). For configurations written
# for CodeLLDB or cppdbg, any other field is reported as ignored.
_LLDB_DAP_FIELDS = {
    "initCommands", "preRunCommands", "postRunCommands", "stopCommands", "exitCommands",
    "terminateCommands", "launchCommands", "attachCommands", "sourceMap", "sourcePath",
    "debuggerRoot", "disableASLR", "disableSTDIO", "shellExpandArguments", "detachOnError",
    "timeout", "customFrameFormat", "customThreadFormat", "displayExtendedBacktrace",
    "commandEscapePrefix", "enableAutoVariableSummaries", "enableSyntheticChildDebugging",
    "coreFile", "gdb-remote-port", "gdb-remote-hostname", "runInTerminal",
}

# What the node backend (CDP, no adapter between) reads; other fields are reported.
_NODE_FIELDS = {"runtimeExecutable", "runtimeArgs", "outDirs", "remoteRoot", "localRoot"}
_NODE_HARMLESS = {"sourceMaps", "trace", "outputCapture", "showAsyncStacks"}

_KNOWN_COMMANDS = {
    # The interpreter VS Code has selected: here, the one the debugger runs under.
    "python.interpreterPath": lambda: sys.executable,
}


class LaunchConfig(BaseModel):
    """One configuration of launch.json, resolved: what `launch` or `attach` needs."""

    name: str
    type: str
    request: Literal["launch", "attach"]
    adapter: str
    program: str | None = None
    args: list[str] = Field(default_factory=empty_list)
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    stop_on_entry: bool = False
    # python -m MODULE (debugpy): program is absent then.
    module: str | None = None
    # attach
    pid: int | None = None
    host: str | None = None
    port: int | None = None
    wait_for: str | None = None
    # adapter-specific fields, passed to the adapter as they are
    extra: dict[str, Any] = Field(default_factory=dict)
    # what we ignored and why, one sentence each
    warnings: list[str] = Field(default_factory=empty_list)
    source: str = ""  # the launch.json it came from
    workspace: str = ""  # the folder holding .vscode


class LaunchConfigSummary(BaseModel):
    """A line of `tui-debugger launches`."""

    name: str
    type: str
    request: str
    adapter: str | None = None
    supported: bool = True
    note: str = ""
    source: str = ""

    def line(self) -> str:
        where = f"-> {self.adapter}" if self.adapter else ""
        text = f"{self.name}  ({self.type}, {self.request}{', ' + where if where else ''})"
        return text + (f"  [{self.note}]" if self.note else "")


# ============================================================================ JSON with comments


def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas -> JSON.

    Comments become spaces (newlines kept) so json's line and column numbers
    still point into the user's file. Only text outside strings is touched.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                line = text.count("\n", 0, i) + 1
                raise ValueError(f"a /* comment opened on line {line} is never closed")
            out.append(re.sub(r"[^\n]", " ", text[i:j + 2]))
            i = j + 2
        else:
            out.append(ch)
            i += 1
    return _drop_trailing_commas("".join(out))


def _drop_trailing_commas(text: str) -> str:
    chars = list(text)
    i, n = 0, len(chars)
    while i < n:
        ch = chars[i]
        if ch == '"':
            i += 1
            while i < n and chars[i] != '"':
                i += 2 if chars[i] == "\\" else 1
        elif ch == ",":
            j = i + 1
            while j < n and chars[j] in " \t\r\n":
                j += 1
            if j < n and chars[j] in "}]":
                chars[i] = " "
        i += 1
    return "".join(chars)


def loads_jsonc(text: str, source: str = "launch.json") -> Any:
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return json.loads(strip_jsonc(text))
    except ValueError as exc:
        where = ""
        if isinstance(exc, json.JSONDecodeError):
            where = f" (line {exc.lineno}, column {exc.colno})"
            exc_text = exc.msg
        else:
            exc_text = str(exc)
        raise InvalidInput(f"{source} is not valid JSON{where}: {exc_text}. Fix the file.",
                           file=source) from None


# ============================================================================ finding the file


def find_launch_json(cwd: str) -> Path | None:
    """`.vscode/launch.json` in cwd or the nearest directory above it."""
    here = Path(os.path.abspath(cwd))
    for folder in (here, *here.parents):
        candidate = folder / LAUNCH_JSON
        if candidate.is_file():
            return candidate
    return None


def _load(cwd: str) -> tuple[Path, dict[str, Any]]:
    path = find_launch_json(cwd)
    if path is None:
        raise InvalidInput(
            f"No {LAUNCH_JSON} in {os.path.abspath(cwd)} or any directory above it. Create one, "
            "or launch without a configuration: tui-debugger start PROGRAM."
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"Cannot read {path}: {exc}.") from None
    data = loads_jsonc(text, str(path))
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} should hold an object with a \"configurations\" list.")
    configs = data.get("configurations", [])
    if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
        raise InvalidInput(f"{path}: \"configurations\" should be a list of objects.")
    compounds = data.get("compounds", [])
    if not isinstance(compounds, list):
        compounds = []
    data["compounds"] = [c for c in compounds if isinstance(c, dict)]
    return path, data


def _platform_key() -> str:
    if sys.platform == "darwin":
        return "osx"
    if sys.platform.startswith("win"):
        return "windows"
    return "linux"


def _with_platform(config: dict[str, Any]) -> dict[str, Any]:
    """VS Code's per-platform properties ("linux": {...}) override the others,
    objects (env) key by key, as VS Code merges them."""
    override = config.get(_platform_key())
    return merged_tables(config, override) if isinstance(override, dict) else dict(config)


# ============================================================================ variables


class _Unresolvable(Exception):
    pass


_VAR = re.compile(r"\$\{([^}]*)\}")


class _Variables:
    def __init__(self, workspace: str, cwd: str, current_file: str | None):
        self.workspace = workspace
        self.cwd = cwd
        self.file = os.path.normpath(os.path.join(cwd, current_file)) if current_file else None

    def _need_file(self, var: str) -> str:
        if not self.file:
            raise _Unresolvable(
                f"${{{var}}} is the file open in VS Code's editor; name that file after the "
                "configuration (tui-debugger start --launch NAME FILE, MCP: program)"
            )
        return self.file

    def value(self, var: str) -> str:
        simple = {
            "workspaceFolder": lambda: self.workspace,
            "workspaceRoot": lambda: self.workspace,
            "fileWorkspaceFolder": lambda: self.workspace,
            "workspaceFolderBasename": lambda: os.path.basename(self.workspace),
            "cwd": lambda: self.cwd,
            "userHome": lambda: os.path.expanduser("~"),
            "pathSeparator": lambda: os.sep,
            "/": lambda: os.sep,
            "file": lambda: self._need_file(var),
            "fileBasename": lambda: os.path.basename(self._need_file(var)),
            "fileBasenameNoExtension": lambda: os.path.splitext(
                os.path.basename(self._need_file(var)))[0],
            "fileExtname": lambda: os.path.splitext(self._need_file(var))[1],
            "fileDirname": lambda: os.path.dirname(self._need_file(var)),
            "fileDirnameBasename": lambda: os.path.basename(os.path.dirname(self._need_file(var))),
            "relativeFile": lambda: os.path.relpath(self._need_file(var), self.workspace),
            "relativeFileDirname": lambda: os.path.relpath(
                os.path.dirname(self._need_file(var)), self.workspace),
        }
        if var in simple:
            return simple[var]()
        kind, _, arg = var.partition(":")
        if kind == "env" and arg:
            return os.environ.get(arg, "")  # VS Code too reads an unset variable as empty
        if kind == "workspaceFolder" and arg:
            if arg == os.path.basename(self.workspace):
                return self.workspace
            raise _Unresolvable(
                f"${{{var}}} names a folder of a multi-root workspace; only the folder holding "
                f".vscode ({os.path.basename(self.workspace)}) is known here"
            )
        if kind == "command" and arg in _KNOWN_COMMANDS:
            return _KNOWN_COMMANDS[arg]()
        if kind == "command":
            hint = ""
            if arg in ("pickProcess", "pickMyProcess", "PickProcess"):
                hint = "; attach by pid instead: tui-debugger attach PID"
            elif arg in ("pickArgs",):
                hint = "; give the arguments after the program"
            raise _Unresolvable(f"${{{var}}} runs a VS Code command, which is not available "
                                f"here{hint}")
        if kind == "input":
            raise _Unresolvable(f"${{{var}}} prompts in VS Code (an \"inputs\" entry); put the "
                                "value in the configuration")
        if kind == "config":
            raise _Unresolvable(f"${{{var}}} reads a VS Code setting, which is not available "
                                "here; put the value in the configuration")
        raise _Unresolvable(f"${{{var}}} is not a variable we know")

    def resolve(self, value: Any) -> Any:
        if isinstance(value, str):
            return _VAR.sub(lambda m: self.value(m.group(1)), value)
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value


# ============================================================================ resolving


def _available(configs: list[dict[str, Any]], compounds: list[dict[str, Any]]) -> list[str]:
    return [str(c.get("name")) for c in configs if c.get("name")] + \
        [str(c.get("name")) for c in compounds if c.get("name")]


def _pick(name: str, path: Path, data: dict[str, Any]) -> dict[str, Any]:
    configs, compounds = data.get("configurations", []), data["compounds"]
    for exact in (True, False):
        for config in configs:
            cname = str(config.get("name", ""))
            if cname == name if exact else cname.lower() == name.lower():
                return config
        for compound in compounds:
            cname = str(compound.get("name", ""))
            if cname == name if exact else cname.lower() == name.lower():
                parts = [p if isinstance(p, str) else str(p.get("name", p))
                         for p in compound.get("configurations", [])]
                raise InvalidInput(
                    f"{cname!r} in {path} is a compound: it starts {', '.join(map(repr, parts))} "
                    "together, and a session debugs one program. Start each one in its own "
                    "session: tui-debugger start --launch NAME --session NAME.",
                    field="compounds",
                )
    names = _available(configs, compounds)
    listing = ", ".join(repr(n) for n in names) or "none"
    raise InvalidInput(
        f"No configuration named {name!r} in {path}. Configurations: {listing}.",
        valid=names,
    )


def _field_error(config_name: str, field: str, why: str) -> InvalidInput:
    return InvalidInput(f"Launch configuration {config_name!r}, field \"{field}\": {why}.",
                        field=field)


def _as_args(value: Any, config_name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        # Python and CodeLLDB accept one string; split it as a shell would.
        try:
            return shlex.split(value)
        except ValueError as exc:
            raise _field_error(config_name, "args", f"cannot split {value!r}: {exc}") from None
    if isinstance(value, list):
        return [v if isinstance(v, str) else json.dumps(v) for v in value]
    raise _field_error(config_name, "args", "should be a list of strings")


def _as_env(value: Any, config_name: str, field: str, warnings: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if isinstance(value, list):
        # cppdbg: [{"name": "X", "value": "1"}]
        out: dict[str, str] = {}
        for item in value:
            if isinstance(item, dict) and "name" in item:
                out[str(item["name"])] = str(item.get("value", ""))
            elif isinstance(item, str) and "=" in item:
                key, _, val = item.partition("=")
                out[key] = val
            else:
                raise _field_error(config_name, field, f"cannot read the entry {item!r}")
        return out
    if not isinstance(value, dict):
        raise _field_error(config_name, field, "should be an object of NAME: VALUE")
    out = {}
    for key, val in value.items():
        if val is None:
            warnings.append(f"\"{field}\": {key}: null (unset a variable) is not supported; "
                            f"{key} keeps its value from the environment.")
            continue
        out[str(key)] = str(val).lower() if isinstance(val, bool) else str(val)
    return out


def read_env_file(path: str) -> dict[str, str]:
    """KEY=VALUE lines as in a .env file: `export `, quotes and # comments allowed."""
    env: dict[str, str] = {}
    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        key, sep, value = line.partition("=")
        if not sep:
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        env[key.strip()] = value
    return env


def _as_int(value: Any, config_name: str, field: str) -> int:
    if isinstance(value, bool):
        raise _field_error(config_name, field, f"should be a number, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise _field_error(config_name, field, f"should be a number, got {value!r}")


def resolve_launch_config(
    name: str, cwd: str, current_file: str | None = None, provided: frozenset[str] | set[str] = frozenset(),
) -> LaunchConfig:
    """The configuration `name` of the launch.json found from `cwd`, resolved.

    `current_file` stands for VS Code's open editor (${file} and friends).
    `provided` names fields the caller gives itself ("program", "args"): they
    are not resolved, so a VS Code prompt in them is no obstacle.
    """
    path, data = _load(cwd)
    raw = _with_platform(_pick(name, path, data))
    workspace = str(path.parent.parent)
    config_name = str(raw.get("name", name))
    variables = _Variables(workspace, os.path.abspath(cwd), current_file)
    warnings: list[str] = []

    ctype = raw.get("type")
    if not isinstance(ctype, str) or not ctype:
        raise _field_error(config_name, "type", "missing; it says which debugger runs the program "
                           f"(one of {', '.join(sorted(TYPE_TO_ADAPTER))})")
    if ctype in UNSUPPORTED_TYPES:
        raise _field_error(config_name, "type", f"{ctype!r} is not supported: {UNSUPPORTED_TYPES[ctype]}")
    adapter = TYPE_TO_ADAPTER.get(ctype)
    if adapter is None:
        raise _field_error(config_name, "type", f"{ctype!r} is not a debugger we have. Supported "
                           f"types: {', '.join(sorted(TYPE_TO_ADAPTER))}")
    request = raw.get("request")
    if request not in ("launch", "attach"):
        raise _field_error(config_name, "request", f"should be \"launch\" or \"attach\", got {request!r}")

    def get(field: str, default: Any = None) -> Any:
        if field not in raw:
            return default
        try:
            return variables.resolve(raw[field])
        except _Unresolvable as exc:
            raise _field_error(config_name, field, str(exc)) from None

    cfg = LaunchConfig(name=config_name, type=ctype, request=request, adapter=adapter,
                       source=str(path), workspace=workspace)
    cfg.cwd = get("cwd") or workspace
    if not os.path.isabs(cfg.cwd):
        cfg.cwd = os.path.normpath(os.path.join(workspace, cfg.cwd))
    if "program" not in provided:
        program = get("program")
        if program is not None and not isinstance(program, str):
            raise _field_error(config_name, "program", "should be a path")
        cfg.program = program or None
    if "args" not in provided:
        cfg.args = _as_args(get("args"), config_name)

    env_file = get("envFile")
    if env_file:
        env_path = env_file if os.path.isabs(env_file) else os.path.join(cfg.cwd, env_file)
        if os.path.isfile(env_path):
            try:
                cfg.env.update(read_env_file(env_path))
            except (OSError, UnicodeDecodeError) as exc:
                raise _field_error(config_name, "envFile", f"cannot read {env_path}: {exc}") from None
        else:
            warnings.append(f"\"envFile\": {env_path} does not exist; no variables read from it.")
    cfg.env.update(_as_env(get("env"), config_name, "env", warnings))

    stop = raw.get("stopOnEntry", raw.get("stopAtEntry") if ctype == "cppdbg" else None)
    if stop is not None and not isinstance(stop, bool):
        raise _field_error(config_name, "stopOnEntry", f"should be true or false, got {stop!r}")
    cfg.stop_on_entry = bool(stop)

    handled = set(_COMMON_FIELDS)
    for field, why in _VSCODE_ACTIONS.items():
        if field in raw:
            warnings.append(f"\"{field}\" ignored: {why}.")
    handled |= set(_VSCODE_ACTIONS) | _VSCODE_UI_FIELDS

    if request == "attach":
        handled |= _ATTACH_FIELDS
        _read_attach(cfg, raw, get, config_name)

    rest = {k: v for k, v in raw.items() if k not in handled}
    adapt = {"debugpy": _adapt_debugpy, "lldb-dap": _adapt_lldb, "dlv": _adapt_go,
             "node": _adapt_node}[adapter]
    cfg.extra = adapt(cfg, rest, get, config_name, warnings)

    if request == "launch" and not cfg.program and not cfg.module and "program" not in provided:
        if not (adapter == "debugpy" and "code" in cfg.extra):
            raise _field_error(config_name, "program", "missing; say which program to run"
                               + (" (or \"module\")" if adapter == "debugpy" else ""))
    cfg.warnings = warnings
    return cfg


def _read_attach(cfg: LaunchConfig, raw: dict[str, Any], get, config_name: str) -> None:
    for field in ("processId", "pid"):
        if field in raw and raw[field] not in (None, ""):
            cfg.pid = _as_int(get(field), config_name, field)
            break
    connect = get("connect")
    if isinstance(connect, dict):
        cfg.host = connect.get("host") or None
        if connect.get("port") is not None:
            cfg.port = _as_int(connect["port"], config_name, "connect.port")
    if raw.get("port") is not None:
        cfg.port = _as_int(get("port"), config_name, "port")
    cfg.host = get("host") or get("address") or cfg.host
    if cfg.adapter == "lldb-dap" and raw.get("gdb-remote-port") is not None:
        # lldb-dap's own fields for a gdb-remote server (lldb-server gdbserver)
        cfg.port = _as_int(get("gdb-remote-port"), config_name, "gdb-remote-port")
        cfg.host = get("gdb-remote-hostname") or cfg.host
    if raw.get("waitFor") and cfg.adapter == "lldb-dap":
        target = cfg.program or get("program")
        if not target:
            raise _field_error(config_name, "waitFor", "needs \"program\": the process to wait for")
        cfg.wait_for = os.path.basename(target)
    if cfg.pid is None and cfg.port is None and cfg.wait_for is None:
        if "listen" in raw:
            raise _field_error(config_name, "listen", "debugpy connecting back to us is not "
                               "supported; start the program with `python -m debugpy --listen "
                               "PORT` and attach with \"connect\"")
        raise _field_error(config_name, "processId", "an attach configuration needs \"processId\", "
                           "or \"port\" (with \"host\"), of the process to attach to")


# ============================================================================ per adapter


def _adapt_debugpy(cfg: LaunchConfig, rest: dict[str, Any], get, name: str,
                   warnings: list[str]) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    for field in rest:
        if field == "module":
            cfg.module = get(field)
            extra["module"] = cfg.module
        elif field == "console":
            value = get(field)
            if value not in (None, "internalConsole"):
                warnings.append(f"\"console\": {value!r} ignored: output is always captured by the "
                                "debugger (read it with `output`).")
        elif field == "redirectOutput":
            if get(field) is False:
                warnings.append("\"redirectOutput\": false ignored: output is always captured.")
        elif field == "subProcess":
            # Child processes are followed by default (a session each); false turns it off.
            if get(field) is False:
                extra["subProcess"] = False
        elif field == "sudo":
            if get(field):
                raise _field_error(name, "sudo", "running the program as root through sudo is "
                                   "not supported; run tui-debugger itself as root")
        elif field in ("python", "pythonPath"):
            value = get(field)
            if value:
                extra["python"] = value if isinstance(value, list) else [value]
        else:
            extra[field] = get(field)
    return extra


def _adapt_lldb(cfg: LaunchConfig, rest: dict[str, Any], get, name: str,
                warnings: list[str]) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    foreign = cfg.type in ("lldb", "cppdbg")
    source_map: list[list[str]] = []
    for field in rest:
        if field == "cargo":
            raise _field_error(name, "cargo", "building with cargo is CodeLLDB's; build first "
                               "(cargo build) and set \"program\" to the binary in target/debug")
        if cfg.type == "cppdbg" and field == "stopAtEntry":
            continue
        if cfg.type == "cppdbg" and field == "environment":
            cfg.env.update(_as_env(get(field), name, field, warnings))
            continue
        if field in ("sourceMap", "sourceFileMap"):
            value = get(field)
            if isinstance(value, dict):
                for remote, local in value.items():
                    if isinstance(local, dict):
                        local = local.get("editorPath")
                    if isinstance(local, str):
                        source_map.append([remote, local])
            elif isinstance(value, list):
                source_map.extend([list(p) for p in value if isinstance(p, (list, tuple))])
            continue
        if field == "console" or field == "terminal" or field == "externalConsole":
            value = get(field)
            if value not in (None, False, "internalConsole", "console"):
                warnings.append(f"\"{field}\": {value!r} ignored: output is always captured by "
                                "the debugger (read it with `output`).")
            continue
        if field == "runInTerminal":
            if get(field):
                warnings.append("\"runInTerminal\" ignored: output is always captured by the "
                                "debugger (read it with `output`).")
            continue
        if foreign and field not in _LLDB_DAP_FIELDS:
            owner = "CodeLLDB" if cfg.type == "lldb" else "the C/C++ extension (gdb/MI)"
            warnings.append(f"\"{field}\" ignored: it is a setting of {owner}; this configuration "
                            "runs under lldb-dap, which does not read it.")
            continue
        extra[field] = get(field)
    if source_map:
        # lldb-dap takes [[from, to], ...]; CodeLLDB and cppdbg write {from: to}.
        extra["sourceMap"] = source_map
    return extra


def _adapt_go(cfg: LaunchConfig, rest: dict[str, Any], get, name: str,
              warnings: list[str]) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    for field in rest:
        value = get(field)
        if field == "mode":
            if cfg.request == "attach" and value == "remote":
                # `dlv --headless --listen HOST:PORT`: host and port say where; the
                # backend attaches in remote mode when it is given a port.
                if cfg.port is None:
                    raise _field_error(name, "port", "\"mode\": \"remote\" needs the port "
                                       "(and host) of `dlv --headless --listen HOST:PORT`")
                continue
            if value in (None, "auto"):
                continue  # chosen from the program: a binary runs as is, a package is built
            extra["mode"] = value
        elif field == "debugAdapter":
            if value == "legacy":
                warnings.append("\"debugAdapter\": \"legacy\" ignored: dlv runs as a DAP server "
                                "(dlv dap).")
        elif field == "remotePath":
            warnings.append("\"remotePath\" ignored: it is the legacy Go adapter's field; "
                            "map the paths with \"substitutePath\" [{\"from\": LOCAL, "
                            "\"to\": REMOTE}].")
        elif field in ("dlvFlags", "dlvToolPath"):
            warnings.append(f"\"{field}\" ignored: dlv is started by the debugger; set its path "
                            "and arguments in the config file ([adapters.dlv]).")
        elif field == "console":
            if value not in (None, "internalConsole"):
                warnings.append(f"\"console\": {value!r} ignored: output is always captured.")
        elif field in ("host", "port") and cfg.request == "launch":
            raise _field_error(name, field, "launching through a remote dlv server is not "
                               "supported; remove host/port to run the program here")
        else:
            extra[field] = value
    return extra


def _glob_root(pattern: str) -> str:
    """'/proj/dist/**/*.js' -> '/proj/dist': the folder before the first wildcard."""
    parts = []
    for part in pattern.replace("\\", "/").split("/"):
        if any(c in part for c in "*?[{"):
            break
        parts.append(part)
    return "/".join(parts)


_NODE_RUNTIMES = re.compile(r"^(node|nodejs)(\.exe)?$|^node\d*$")


def _adapt_node(cfg: LaunchConfig, rest: dict[str, Any], get, name: str,
                warnings: list[str]) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    for field in rest:
        value = get(field)
        if field == "runtimeExecutable":
            if value and not _NODE_RUNTIMES.match(os.path.basename(str(value))):
                raise _field_error(name, field, f"{value!r} is not node; the node backend runs "
                                   "node itself. Set \"program\" to the script (npm/yarn scripts "
                                   "and other runtimes are not supported)")
            if value:
                extra[field] = value
        elif field in _NODE_FIELDS:
            extra[field] = value
        elif field == "outFiles":
            # Globs of generated code; the backend wants the folders to search.
            dirs = [_glob_root(g) for g in value or [] if isinstance(g, str) and not g.startswith("!")]
            extra.setdefault("outDirs", [])
            extra["outDirs"] += [d for d in dirs if d and d not in extra["outDirs"]]
        elif field in _NODE_HARMLESS:
            continue
        elif field == "console":
            if value not in (None, "internalConsole"):
                warnings.append(f"\"console\": {value!r} ignored: output is always captured.")
        elif field == "skipFiles":
            warnings.append("\"skipFiles\" ignored: every frame is shown and stepped into.")
        else:
            warnings.append(f"\"{field}\" ignored: the node backend does not read it.")
    return extra


# ============================================================================ listing


def list_launch_configs(cwd: str) -> list[LaunchConfigSummary]:
    """Every configuration and compound of the launch.json found from cwd, with
    the adapter it runs under, or why it cannot run here."""
    path, data = _load(cwd)
    out: list[LaunchConfigSummary] = []
    for raw in data.get("configurations", []):
        raw = _with_platform(raw)
        ctype = str(raw.get("type", "?"))
        request = str(raw.get("request", "?"))
        summary = LaunchConfigSummary(name=str(raw.get("name", "?")), type=ctype,
                                      request=request, adapter=TYPE_TO_ADAPTER.get(ctype),
                                      source=str(path))
        if ctype in UNSUPPORTED_TYPES:
            summary.supported, summary.note = False, f"not supported: {UNSUPPORTED_TYPES[ctype]}"
        elif summary.adapter is None:
            summary.supported, summary.note = False, f"not supported: no debugger for type {ctype!r}"
        out.append(summary)
    for compound in data["compounds"]:
        parts = [p if isinstance(p, str) else str(p.get("name", p))
                 for p in compound.get("configurations", [])]
        out.append(LaunchConfigSummary(
            name=str(compound.get("name", "?")), type="compound", request="launch",
            supported=False, source=str(path),
            note="compound of " + ", ".join(parts) + ": start each on its own"))
    return out


__all__ = [
    "LaunchConfig", "LaunchConfigSummary", "find_launch_json", "list_launch_configs",
    "loads_jsonc", "read_env_file", "resolve_launch_config", "strip_jsonc",
]
