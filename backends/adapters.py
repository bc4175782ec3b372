"""Adapter registry: which backend debugs which program, where its debugger lives,
and how to install it when it is missing.

Selection order (seeds/000, generalised): explicit argument, then the
TUI_DEBUGGER_ADAPTER environment variable, then the program's type. An unknown
name is an error that lists the valid ones.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable

from .base import Backend, EventSink
from .errors import DependencyMissing, InvalidInput

ENV_ADAPTER = "TUI_DEBUGGER_ADAPTER"


@dataclass
class AdapterInfo:
    """What `doctor` reports for one adapter."""

    name: str
    available: bool
    path: str | None = None
    version: str | None = None
    install_hint: str = ""
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "available": self.available,
            "path": self.path,
            "version": self.version,
            "install_hint": self.install_hint,
            "note": self.note,
        }


@dataclass
class AdapterEntry:
    name: str
    description: str
    backend_path: str  # "module:Class", imported on first use
    discover: Callable[[], AdapterInfo]
    aliases: tuple[str, ...] = ()
    languages: tuple[str, ...] = field(default_factory=tuple)
    # Facts of the adapter that the layers above act on, so that none of them
    # tests an adapter's name; each default is the answer for a debugger that
    # has no such trait.
    #: how its values are typed: "python" (`type(v).__name__`, `len()` of a
    #: value), "node" (`typeof`) or "native" (the debugger's C or Go type; `e,x`
    #: reads a value in hex, since a comma cannot end a meaningful expression)
    values: str = "native"
    #: LLDB underneath: its command language (vetted by the allowlist), and a
    #: struct's value said as `type @ address`, its fields read as children
    lldb: bool = False
    #: where "stop on entry" stops instead of the loader's sourceless entry point
    entry_function: str | None = None
    #: runs native binaries, whose debug information decides whether it can show
    #: source lines and locals (checked before launch; C sources are built first)
    native_binaries: bool = False
    #: runs the program under a Python interpreter chosen for it (the user's)
    chooses_python: bool = False
    #: may end a program it killed without an exit status (delve), or answer
    #: before the status came in (LLDB, under load)
    kills_silently: bool = False

    def backend_class(self) -> type[Backend]:
        module_name, _, cls_name = self.backend_path.partition(":")
        module = importlib.import_module(module_name)
        return getattr(module, cls_name)


# --------------------------------------------------------------------------- discovery helpers


def _version_of(argv: list[str], timeout: float = 5.0) -> str | None:
    try:
        out = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0].strip() if text else None


def which_first(candidates: list[str]) -> str | None:
    for name in candidates:
        found = shutil.which(name)
        if found:
            return found
    return None


def override_key(name: str) -> str:
    return "TUI_DEBUGGER_" + name.upper().replace("-", "_") + "_PATH"


def _override(name: str) -> str | None:
    """A user-set path for an adapter: TUI_DEBUGGER_<NAME>_PATH (dashes as underscores).
    A path that does not exist counts as missing, so `doctor` and launch say so."""
    value = os.environ.get(override_key(name))
    if not value:
        return None
    resolved = value if os.sep in value else shutil.which(value)
    if resolved and os.path.exists(resolved):
        return resolved
    return ""


def _bad_override(name: str) -> str:
    return f"{override_key(name)} points to {os.environ.get(override_key(name))!r}, which does not exist; fix or unset it."


def adapter_args(name: str) -> list[str]:
    """Extra arguments for an adapter's executable: TUI_DEBUGGER_<NAME>_ARGS, a
    shell-quoted string (the config file's [adapters.NAME] args end up here)."""
    import shlex

    value = os.environ.get("TUI_DEBUGGER_" + name.upper().replace("-", "_") + "_ARGS", "")
    try:
        return shlex.split(value)
    except ValueError:
        raise InvalidInput(
            f"TUI_DEBUGGER_{name.upper().replace('-', '_')}_ARGS={value!r} is not a valid "
            "argument list (check its quotes)."
        ) from None


def lldb_dap_candidates() -> list[str]:
    names = ["lldb-dap", "lldb-vscode"]
    for version in range(30, 9, -1):
        names += [f"lldb-dap-{version}", f"lldb-vscode-{version}"]
    return names


def find_lldb_dap() -> str | None:
    override = _override("lldb-dap")
    if override is not None:
        return override or None
    found = which_first(lldb_dap_candidates())
    if found:
        return found
    if sys.platform == "darwin" and shutil.which("xcrun"):
        try:
            out = subprocess.run(
                ["xcrun", "--find", "lldb-dap"], capture_output=True, text=True, timeout=10
            )
            if out.returncode == 0 and out.stdout.strip():
                return out.stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            pass
    return None


def find_lldb() -> str | None:
    override = _override("lldb")
    if override is not None:
        return override or None
    names = ["lldb"] + [f"lldb-{v}" for v in range(30, 9, -1)]
    return which_first(names)


def find_dlv() -> str | None:
    override = _override("dlv")
    if override is not None:
        return override or None
    found = shutil.which("dlv")
    if found:
        return found
    gopath = os.path.join(os.path.expanduser("~"), "go", "bin", "dlv")
    return gopath if os.access(gopath, os.X_OK) else None


def find_node() -> str | None:
    override = _override("node")
    if override is not None:
        return override or None
    return shutil.which("node") or shutil.which("nodejs")


def _native_hint(tool: str) -> str:
    if sys.platform == "darwin":
        return "Install Xcode's command line tools: xcode-select --install"
    return f"Install it: sudo apt-get install {tool}  (or your distribution's LLVM package)"


def _discover_debugpy() -> AdapterInfo:
    try:
        import debugpy  # noqa: F401

        version = getattr(debugpy, "__version__", None)
        return AdapterInfo(
            "debugpy", True, os.path.dirname(debugpy.__file__), version,
            note=f"runs under {sys.executable}",
        )
    except ImportError:
        return AdapterInfo(
            "debugpy", False, install_hint=f"{sys.executable} -m pip install debugpy"
        )


def _discover_lldb_dap() -> AdapterInfo:
    path = find_lldb_dap()
    if not path:
        return AdapterInfo(
            "lldb-dap", False,
            install_hint=_bad_override("lldb-dap") if _override("lldb-dap") == "" else
            _native_hint("lldb-19  (provides lldb-dap-19)"),
        )
    version = _version_of([path, "--version"])
    if not version:
        # lldb-dap has no --version; the lldb it ships with does (lldb-dap-19 -> lldb-19).
        sibling = os.path.join(os.path.dirname(path),
                               os.path.basename(path).replace("lldb-dap", "lldb").replace("lldb-vscode", "lldb"))
        if os.path.exists(sibling) and sibling != path:
            version = _version_of([sibling, "--version"])
    return AdapterInfo("lldb-dap", True, path, version)


def _discover_lldb_cli() -> AdapterInfo:
    path = find_lldb()
    if not path:
        return AdapterInfo("lldb-cli", False, install_hint=_bad_override("lldb") if
                           _override("lldb") == "" else _native_hint("lldb-19"))
    return AdapterInfo("lldb-cli", True, path, _version_of([path, "--version"]))


def _discover_dlv() -> AdapterInfo:
    path = find_dlv()
    if not path:
        return AdapterInfo(
            "dlv", False,
            install_hint=_bad_override("dlv") if _override("dlv") == "" else "Install delve: sudo apt-get install delve, or "
            "go install github.com/go-delve/delve/cmd/dlv@latest",
        )
    version = _version_of([path, "version"])
    out = subprocess.run([path, "version"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("Version:"):
            version = line.split(":", 1)[1].strip()
    return AdapterInfo("dlv", True, path, version)


def _discover_node() -> AdapterInfo:
    path = find_node()
    if not path:
        return AdapterInfo(
            "node", False, install_hint=_bad_override("node") if _override("node") == "" else "Install Node.js: sudo apt-get install nodejs"
        )
    return AdapterInfo("node", True, path, _version_of([path, "--version"]))


def _discover_simctl() -> AdapterInfo:
    xcrun = os.environ.get("TUI_DEBUGGER_XCRUN") or shutil.which("xcrun")
    if not xcrun:
        note = (
            "iOS simulator debugging needs Xcode on macOS."
            if sys.platform != "darwin"
            else ""
        )
        return AdapterInfo(
            "simctl", False,
            install_hint="Install Xcode and run: xcode-select --install",
            note=note or "xcrun was not found on PATH",
        )
    return AdapterInfo("simctl", True, xcrun, None, note="reached through attach --sim")


ADAPTERS: dict[str, AdapterEntry] = {
    "debugpy": AdapterEntry(
        "debugpy", "Python, through debugpy (DAP)", "backends.dap.debugpy_adapter:DebugpyBackend",
        _discover_debugpy, aliases=("python", "py"), languages=("python",),
        values="python", chooses_python=True,
    ),
    "lldb-dap": AdapterEntry(
        "lldb-dap", "C, C++, Rust, Swift, through lldb-dap (DAP)",
        "backends.dap.lldb_dap:LldbDapBackend", _discover_lldb_dap,
        aliases=("lldb", "lldb-vscode", "dap"), languages=("c", "cpp", "rust", "swift"),
        lldb=True, entry_function="main", native_binaries=True, kills_silently=True,
    ),
    "lldb-cli": AdapterEntry(
        "lldb-cli", "C, C++, Rust, Swift, driving the lldb command line",
        "backends.lldb_cli.backend:LldbCliBackend", _discover_lldb_cli,
        aliases=(), languages=("c", "cpp", "rust", "swift"),
        lldb=True, entry_function="main", native_binaries=True, kills_silently=True,
    ),
    "dlv": AdapterEntry(
        "dlv", "Go, through delve (dlv dap)", "backends.dap.delve:DelveBackend",
        _discover_dlv, aliases=("go", "delve"), languages=("go",),
        entry_function="main.main", kills_silently=True,
    ),
    "node": AdapterEntry(
        "node", "JavaScript and TypeScript, through the Chrome DevTools Protocol",
        "backends.cdp.backend:CdpBackend", _discover_node,
        aliases=("cdp", "js", "pwa-node"), languages=("javascript", "typescript"),
        values="node",
    ),
    "simctl": AdapterEntry(
        "simctl", "iOS simulator apps, found through xcrun simctl, debugged with LLDB",
        "backends.lldb_cli.backend:LldbCliBackend", _discover_simctl,
        aliases=("ios", "sim"), languages=("swift", "objc"),
        lldb=True,
    ),
}

#: names accepted by --adapter / TUI_DEBUGGER_ADAPTER (simctl is reached through attach --sim)
USER_ADAPTERS = ["debugpy", "lldb-dap", "lldb-cli", "dlv", "node"]


#: The facts of a session without a known adapter (none yet, a Ray root): the defaults.
NO_PROFILE = AdapterEntry("", "no adapter", "", lambda: AdapterInfo("", False))


def profile(name: str | None) -> AdapterEntry:
    """The facts of the adapter `name` (a session's adapter, an alias);
    NO_PROFILE for none or a name that is no adapter."""
    if not name:
        return NO_PROFILE
    try:
        return ADAPTERS[canonical_name(name)]
    except InvalidInput:
        return NO_PROFILE


def canonical_name(name: str) -> str:
    key = name.strip().lower()
    if key in ADAPTERS:
        return key
    for entry in ADAPTERS.values():
        if key in entry.aliases:
            return entry.name
    raise InvalidInput(
        f"Unknown adapter {name!r}. Valid adapters: {', '.join(USER_ADAPTERS)}.",
        valid=USER_ADAPTERS,
    )


# --------------------------------------------------------------------------- program types

JS_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")


def is_node_command(argv: list[str]) -> bool:
    if not argv:
        return False
    head = os.path.basename(argv[0])
    return head in ("node", "nodejs") or any(a.startswith("--inspect") for a in argv[1:2])


def is_go_binary(path: str) -> bool:
    """Go binaries carry a build-info blob with this magic (since Go 1.13)."""
    try:
        with open(path, "rb") as f:
            data = f.read(64 * 1024 * 1024)
    except OSError:
        return False
    return b"\xff Go buildinf:" in data or b"go.buildid" in data[:1 << 20]


def is_native_binary(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError:
        return False
    return magic in (
        b"\x7fELF",
        b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe",  # Mach-O
    )


def _has_go_files(directory: str) -> bool:
    try:
        return any(name.endswith(".go") for name in os.listdir(directory))
    except OSError:
        return False


def adapter_for_program(program: str, argv: list[str] | None = None) -> str:
    """The adapter a program needs, by its name and, for binaries, its contents."""
    if argv and is_node_command(argv):
        return "node"
    lower = program.lower()
    if lower.endswith((".py", ".pyw")):
        return "debugpy"
    if lower.endswith(JS_SUFFIXES):
        return "node"
    if lower.endswith(".go") or (os.path.isdir(program) and _has_go_files(program)):
        return "dlv"  # Go sources or a package directory: dlv builds and runs them
    if os.path.isfile(program):
        if is_native_binary(program):
            return "dlv" if is_go_binary(program) else "lldb-dap"
        try:
            with open(program, "rb") as f:
                first = f.readline(200)
        except OSError:
            first = b""
        if first.startswith(b"#!") and b"python" in first:
            return "debugpy"
        if first.startswith(b"#!") and b"node" in first:
            return "node"
    raise InvalidInput(
        f"Cannot tell which debugger {program!r} needs. Pass --adapter with one of: "
        f"{', '.join(USER_ADAPTERS)}.",
        valid=USER_ADAPTERS,
    )


def stand_in(name: str) -> str:
    """`name`, or the adapter that stands in for it on this machine when its
    debugger is missing: lldb-cli for lldb-dap, where lldb is installed."""
    if name == "lldb-dap" and not find_lldb_dap() and find_lldb():
        return "lldb-cli"
    return name


def select_adapter(
    explicit: str | None, program: str | None = None, argv: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> str:
    env = os.environ if env is None else env
    if explicit:
        return canonical_name(explicit)
    from_env = env.get(ENV_ADAPTER)
    if from_env:
        try:
            return canonical_name(from_env)
        except InvalidInput as exc:
            raise InvalidInput(
                f"{ENV_ADAPTER}={from_env!r} is not an adapter. Valid adapters: "
                f"{', '.join(USER_ADAPTERS)}.",
                valid=USER_ADAPTERS,
            ) from exc
    if program:
        return adapter_for_program(program, argv)
    raise InvalidInput(
        f"No program and no adapter given. Pass --adapter with one of: {', '.join(USER_ADAPTERS)}."
    )


def create_backend(name: str, emit: EventSink, **options: object) -> Backend:
    entry = ADAPTERS[canonical_name(name)]
    info = entry.discover()
    if not info.available:
        raise DependencyMissing(
            f"The {entry.name} adapter is not installed. {info.install_hint}".strip(),
            adapter=entry.name,
        )
    cls = entry.backend_class()
    return cls(emit, **options) if options else cls(emit)


def discover_all() -> list[AdapterInfo]:
    return [entry.discover() for entry in ADAPTERS.values()]
