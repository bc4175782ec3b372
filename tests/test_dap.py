"""`tui-debugger dap`: an editor's DAP client joins the session the CLI and an
agent share. The client is VS Code's own DAP test client
(@vscode/debugadapter-testsupport, installed into tests/.cache), driving the
adapter as a real process over stdio (tests/support/dap_editor.js)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import npm_install, one_at_a_time, require
from tests.support.mcp import PY_BASIC, ROOT, call, cli, cli_json, in_process_client, line_of

TESTSUPPORT_VERSION = "1.68.0"
TESTSUPPORT_DIR = ROOT / "tests" / ".cache" / "dap-testsupport"
EDITOR = ROOT / "tests" / "support" / "dap_editor.js"
REL_BASIC = "tests/programs/py_basic.py"


def owner(bp: dict) -> str:
    return bp.get("setBy", bp.get("set_by"))


@pytest.fixture(scope="session")
def testsupport() -> Path:
    """VS Code's DAP test client, installed once into tests/.cache (gitignored)."""
    modules = TESTSUPPORT_DIR / "node_modules"
    with one_at_a_time("dap-testsupport"):
        npm_install(TESTSUPPORT_DIR, f"@vscode/debugadapter-testsupport@{TESTSUPPORT_VERSION}",
                    modules / "@vscode" / "debugadapter-testsupport" / "package.json",
                    "@vscode/debugadapter-testsupport")
    return modules


class Editor:
    """The test client's process: each step it reports, and a nudge to go on."""

    def __init__(self, proc: asyncio.subprocess.Process):
        self.proc = proc
        self.noise: list[str] = []

    async def step(self, name: str, timeout: float = 60) -> dict:
        assert self.proc.stdout is not None
        while True:
            raw = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
            if not raw:
                raise AssertionError(f"the editor ended before {name!r}:\n" + "".join(self.noise))
            line = raw.decode()
            if not line.startswith('{"step"'):
                self.noise.append(line)  # the adapter's stderr, which the client echoes
                continue
            report = json.loads(line)
            assert report["step"] == name, (report, "".join(self.noise))
            return report

    async def go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"go\n")
        await self.proc.stdin.drain()


async def editor_ended(proc: asyncio.subprocess.Process | None, *cli_args: str,
                       cwd: Path = ROOT) -> None:
    """A test's way out: the editor's process killed if it is still there,
    then `tui-debugger stop` (with `cli_args`, where it was started)."""
    if proc is not None and proc.returncode is None:
        proc.kill()
        await proc.wait()
    cli("stop", *cli_args, check=False, cwd=cwd)


async def start_editor(script: Path, *args: str, cwd: Path = ROOT) -> Editor:
    """`node SCRIPT ARGS`: an editor's side, its steps read from its stdout."""
    return Editor(await asyncio.create_subprocess_exec(
        "node", str(script), *args, cwd=cwd, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=dict(os.environ)))


def adapter_command() -> str:
    found = shutil.which("tui-debugger")
    assert found, "tui-debugger is not on PATH (scripts/test puts its venv's bin first)"
    return found


@pytest.mark.slow
async def test_vscode_test_client_shares_the_cli_session(mcp_env, testsupport,
                                                         no_leftover_processes):
    call_total = line_of(PY_BASIC, "@call-total")
    count_line = line_of(PY_BASIC, "@count")
    path = str(PY_BASIC)
    cli("start", "--break", f"{REL_BASIC}:{call_total}", REL_BASIC)
    editor = await start_editor(EDITOR, str(testsupport), adapter_command(), path,
                                str(count_line))
    proc = editor.proc
    try:
        # It sees the CLI's stop, and the debugger's own abilities.
        attached = await editor.step("attached")
        assert attached["stop"]["reason"] == "breakpoint"
        assert attached["at"]["line"] == call_total and attached["at"]["path"] == path
        caps = attached["capabilities"]
        assert caps["supportsSetVariable"] and caps["supportsConditionalBreakpoints"]
        assert "uncaught" in {f["filter"] for f in caps["exceptionBreakpointFilters"]}
        (mine,) = attached["breakpoints"]
        assert mine["verified"] and mine["line"] == count_line

        # The CLI's step is a stopped event in the editor.
        cli("next")
        await editor.go()
        stepped = await editor.step("cli-step")
        assert stepped["stop"]["reason"] == "step"
        assert stepped["continued"]["threadId"] == stepped["stop"]["threadId"]  # the CLI resumed
        assert stepped["at"]["line"] == call_total + 1

        # The editor's own step, variables, evaluate and set reach the others.
        await editor.go()
        own = await editor.step("own-step")
        assert own["at"]["line"] == count_line and own["stop"]["reason"] == "breakpoint"
        assert own["ownResumed"] == 0
        assert own["scopes"][0] == "Locals"
        names = {v["name"]: v for v in own["variables"]}
        assert names["count"]["value"] == "0"
        assert names["point"]["variablesReference"] > 0
        assert own["children"], "a value's children"
        assert own["evaluated"]["result"] == "100"
        assert own["set"]["value"] == "41"
        assert "count" in {t["label"] for t in own["completed"]}

        status = cli_json("status")
        assert status["stop"]["location"]["line"] == count_line
        assert "vscode" in {c["origin"] for c in status["clients"]}
        listed = cli_json("break", "list")["breakpoints"]
        assert {(b["line"], owner(b)) for b in listed} == {(call_total, "cli"),
                                                             (count_line, "vscode")}
        assert "count (int) = 41" in cli("locals", "--names", "count").stdout
        activity = cli("activity").stdout
        assert "vscode next" in " ".join(activity.split()), activity

        async with in_process_client() as agent:
            # The capabilities the editor was told are not an agent's bytes.
            assert "capabilities" not in (await call(agent, "debug_status")).data
            assert "supportsSetVariable" not in json.dumps(status)
            assert "set_variable" in status["capabilities"]
            seen = await call(agent, "debug_variables", {"names": ["count"]})
            assert seen["variables"][0]["value"] == "41"
            bps = (await call(agent, "debug_breakpoint_list"))["breakpoints"]
            assert any(owner(b) == "vscode" and b["spec"]["line"] == count_line for b in bps)
            # The agent's breakpoint shows up in the editor.
            await call(agent, "debug_breakpoint_add", {"file": path, "line": count_line + 1})
            await editor.go()
            told = (await editor.step("told"))["breakpoint"]
            assert told["reason"] == "new" and told["breakpoint"]["line"] == count_line + 1

            # The editor's list for the file replaces its own breakpoints only.
            await editor.go()
            cleared = await editor.step("cleared")
            assert cleared["breakpoints"] == []
            own_line, agents_line = cleared["conditioned"]
            assert own_line["id"] == cleared["first"] and own_line["verified"]  # updated in place
            assert agents_line["id"] == told["breakpoint"]["id"]  # the agent's, shown
            left = {(b["line"], owner(b)) for b in cli_json("break", "list")["breakpoints"]}
            assert left == {(call_total, "cli"), (count_line + 1, "mcp")}

        # Leaving leaves the session as it was.
        await editor.go()
        await editor.step("left")
        assert await asyncio.wait_for(proc.wait(), 30) == 0
        status = cli_json("status")
        assert status["state"] == "stopped"
    finally:
        await editor_ended(proc)


LAUNCHER = ROOT / "tests" / "support" / "dap_launch.js"


async def launch_from_editor(testsupport: Path, *extra: str) -> tuple[Editor, dict]:
    scale_line = line_of(PY_BASIC, "@scale")
    editor = await start_editor(LAUNCHER, str(testsupport), adapter_command(), str(PY_BASIC),
                                str(scale_line), *extra)
    launched = await editor.step("launched", timeout=90)
    assert launched["stop"]["reason"] == "breakpoint", launched
    assert launched["at"]["line"] == scale_line and launched["at"]["name"] == "scale"
    return editor, launched


async def leave(editor: Editor) -> None:
    await editor.go()
    await editor.step("left")
    assert await asyncio.wait_for(editor.proc.wait(), 30) == 0


def wait_no_sessions(timeout: float = 20) -> None:
    import time

    from tui_debugger import paths

    deadline = time.monotonic() + timeout
    while paths.live_sessions():
        assert time.monotonic() < deadline, "the launched session outlived its editor"
        time.sleep(0.1)


@pytest.mark.slow
async def test_an_editor_launches_a_session_the_cli_joins(mcp_env, testsupport,
                                                          no_leftover_processes):
    editor, launched = await launch_from_editor(testsupport)
    try:
        # Its breakpoint was set before the program ran (stopped at the entry
        # till configurationDone), and the session is everyone's.
        (bp,) = launched["breakpoints"]
        assert bp["verified"]
        status = cli_json("status")
        assert status["state"] == "stopped" and status["stop"]["function"] == "scale"
        assert "neovim" in {c["origin"] for c in status["clients"]}
        assert "neovim" in {owner(b) for b in cli_json("break", "list")["breakpoints"]}
        # Its restart is the session's: the program runs again to its breakpoint.
        assert editor.proc.stdin is not None
        editor.proc.stdin.write(b"restart\n")
        await editor.proc.stdin.drain()
        restarted = await editor.step("restarted", timeout=90)
        assert restarted["stop"]["reason"] == "breakpoint" and restarted["at"]["name"] == "scale"
        assert "neovim restart" in " ".join(cli("activity").stdout.split())
        # Leaving ends the program it launched (DAP's default for a launch).
        await leave(editor)
        wait_no_sessions()
    finally:
        await editor_ended(editor.proc)


@pytest.mark.slow
async def test_listen_serves_editors_that_carry_the_token(mcp_env, testsupport,
                                                          no_leftover_processes):
    import re

    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui_debugger", "dap", "--listen", "0", cwd=ROOT,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env=dict(os.environ))
    editor = None
    try:
        assert server.stderr is not None
        banner = (await asyncio.wait_for(server.stderr.readline(), 30)).decode()
        found = re.search(r"on 127\.0\.0\.1:(\d+)\. .*\"token\": \"([^\"]+)\"", banner)
        assert found, banner
        port, token = found.groups()
        token_file = Path(os.environ["TUI_DEBUGGER_RUNTIME_DIR"]) / f"dap-{port}.token"
        assert token_file.read_text().strip() == token
        assert token_file.stat().st_mode & 0o077 == 0
        editor, launched = await launch_from_editor(testsupport, port, token)
        assert launched["refused"] and "token" in launched["refused"]
        assert cli_json("status")["stop"]["function"] == "scale"
        await leave(editor)
        wait_no_sessions()
    finally:
        server.terminate()
        await asyncio.wait_for(server.wait(), 20)
        await editor_ended(editor.proc if editor else None)


FOLLOWER = ROOT / "tests" / "support" / "dap_follow.js"


def native_demo() -> tuple[str, str, int]:
    from tests.support.native_build import c_program

    require(shutil.which("lldb-dap-19") is not None or shutil.which("lldb-dap") is not None,
            "lldb-dap (Debian: lldb-19)")
    source = ROOT / "tests" / "programs" / "native_demo.c"
    return str(c_program("native_demo")), str(source), line_of(source, "LINE:loop_body")


def node_session() -> tuple[str, str, int]:
    require(shutil.which("node") is not None, "node")
    source = ROOT / "tests" / "programs" / "node" / "session.js"
    return str(source), str(source), line_of(source, "@mark loop-call")


@pytest.mark.slow
@pytest.mark.parametrize("program", [native_demo, node_session], ids=["lldb-dap", "node"])
async def test_an_editor_follows_native_and_node_sessions(program, mcp_env, testsupport,
                                                          no_leftover_processes):
    binary, source, line = program()
    cli("start", "--break", f"{source}:{line}", binary)
    editor = await start_editor(FOLLOWER, str(testsupport), adapter_command())
    proc = editor.proc
    try:
        attached = await editor.step("attached", timeout=90)
        assert attached["stop"]["reason"] == "breakpoint", attached
        assert attached["at"]["line"] == line and attached["at"]["path"] == source
        assert attached["at"]["variables"], attached
        await editor.go()
        stepped = await editor.step("stepped", timeout=90)
        assert stepped["stop"]["reason"] == "step" and stepped["at"]["line"] != line, stepped
        # The editor's step is the session's: the CLI sees the same line.
        status = cli_json("status")
        assert status["stop"]["location"]["line"] == stepped["at"]["line"]
        assert "vscode" in " ".join(cli("activity").stdout.split())
        await editor.go()
        await editor.step("left")
        assert await asyncio.wait_for(proc.wait(), 30) == 0
        assert cli_json("status")["state"] == "stopped"
    finally:
        await editor_ended(proc)


def test_bad_requests_get_answers_that_say_what_to_do(mcp_env, no_leftover_processes):
    """Garbage, a request before attach, attach with nothing to join, an
    unknown request: each is answered (or skipped) with what to do, and the
    adapter goes on serving."""
    from backends.dap.framing import Decoder, encode

    requests = [
        {"seq": 1, "type": "request", "command": "initialize", "arguments": {"clientID": "Test Client!"}},
        {"seq": 2, "type": "request", "command": "stackTrace", "arguments": {"threadId": 1}},
        {"seq": 3, "type": "request", "command": "attach", "arguments": {}},
        {"seq": 4, "type": "request", "command": "attach", "arguments": {"session": "nope"}},
        {"seq": 5, "type": "request", "command": "stepBack", "arguments": {}},
        {"seq": 7, "type": "request", "command": "variables", "arguments": {"variablesReference": 9}},
        {"seq": 6, "type": "request", "command": "disconnect", "arguments": {}},
    ]
    data = b"Content-Length: 5\r\n\r\n[1,2]" + b"".join(encode(r) for r in requests)
    done = subprocess.run([sys.executable, "-m", "tui_debugger", "dap"], input=data, cwd=ROOT,
                          capture_output=True, timeout=60, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    answers = {m["request_seq"]: m for m in Decoder().feed(done.stdout) if m["type"] == "response"}
    assert answers[1]["success"] and answers[1]["body"]["supportsConfigurationDoneRequest"]
    assert not answers[2]["success"] and "attach" in answers[2]["message"]
    assert not answers[3]["success"] and "No live session" in answers[3]["message"]
    assert not answers[4]["success"] and "'nope'" in answers[4]["message"]
    assert not answers[5]["success"] and "stepBack" in answers[5]["message"]
    assert not answers[7]["success"] and "attach" in answers[7]["message"]
    assert answers[6]["success"]
    assert b"not a JSON object" in done.stderr.lower() or b"json object" in done.stderr.lower()


@pytest.mark.slow
async def test_emacs_dap_mode_steps_the_cli_session(mcp_env, no_leftover_processes):
    """A real editor from Debian's packages (emacs-nox, elpa-dap-mode), in
    batch: it attaches, shows the CLI's stop, steps, and the CLI sees its step."""
    emacs = shutil.which("emacs")
    require(emacs is not None, "Emacs (Debian: emacs-nox)")
    require(bool(list(Path("/usr/share/emacs/site-lisp/elpa").glob("dap-mode-*"))),
            "Emacs dap-mode (Debian: elpa-dap-mode)")
    call_total = line_of(PY_BASIC, "@call-total")
    cli("start", "--break", f"{REL_BASIC}:{call_total}", REL_BASIC)
    try:
        done = await asyncio.to_thread(
            subprocess.run, [emacs, "--batch", "-l", str(ROOT / "tests/support/dap_emacs.el"),
                             adapter_command()],
            cwd=ROOT, capture_output=True, text=True, timeout=120, env=dict(os.environ))
        shown = [line for line in done.stdout.splitlines() if line.startswith("EMACS-")]
        assert done.returncode == 0 and shown == [
            f"EMACS-FRAME {call_total}", f"EMACS-FRAME {call_total + 1}", "EMACS-LEFT"], (
            done.stdout, done.stderr[-3000:])
        status = cli_json("status")
        assert status["state"] == "stopped"
        assert status["stop"]["location"]["line"] == call_total + 1
        # dap-mode introduces itself as VS Code does.
        assert "vscode next" in " ".join(cli("activity").stdout.split())
    finally:
        cli("stop", check=False)


CHILDREN_EDITOR = ROOT / "tests" / "support" / "dap_children.js"


@pytest.mark.slow
@pytest.mark.timeout(180)  # a parent and a child session, two adapters
async def test_child_processes_are_child_debug_sessions(mcp_env, testsupport, tmp_path,
                                                        no_leftover_processes):
    for source in (ROOT / "tests" / "programs" / "children").glob("*child*.py"):
        shutil.copy(source, tmp_path / source.name)
    child_line = line_of(tmp_path / "child.py", "@child")
    done = subprocess.run([sys.executable, "-m", "tui_debugger", "start", "--break",
                           f"child.py:{child_line}", "run_child.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    editor = await start_editor(CHILDREN_EDITOR, str(testsupport), adapter_command(),
                                cwd=tmp_path)
    proc = editor.proc
    try:
        child = await editor.step("child", timeout=120)
        assert child["request"]["request"] == "attach"
        name = child["request"]["configuration"]["session"]
        assert name != "run_child" and name.startswith("run_child")
        assert child["stop"]["reason"] == "breakpoint"
        assert child["at"] == {"line": child_line, "path": str(tmp_path / "child.py")}
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        await editor_ended(proc, cwd=tmp_path)


@pytest.mark.slow
async def test_an_editors_data_breakpoint_is_a_session_watchpoint(mcp_env, testsupport,
                                                                   no_leftover_processes):
    binary, source, line = native_demo()
    cli("start", "--break", f"{source}:{line}", binary)
    cli("break", "remove", "--all")  # the next stop is the watchpoint's
    editor = await start_editor(FOLLOWER, str(testsupport), adapter_command(), "accumulator")
    proc = editor.proc
    try:
        await editor.step("attached", timeout=90)
        await editor.go()
        watched = await editor.step("stepped", timeout=90)
        (set_,) = watched["data"]["set"]
        assert set_["verified"], watched
        assert watched["data"]["info"]["dataId"].endswith(":accumulator")
        assert watched["stop"]["reason"] == "data breakpoint", watched
        assert watched["at"]["name"] == "main"
        listed = cli_json("watch")["watches"]
        assert [(w["expression"], owner(w)) for w in listed] == [("accumulator", "vscode")]
        # The CLI ends the session: the editor is told it terminated.
        cli("stop")
        assert proc.stdin is not None
        proc.stdin.write(b"ended\n")
        await proc.stdin.drain()
        await editor.step("ended")
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        await editor_ended(proc)
