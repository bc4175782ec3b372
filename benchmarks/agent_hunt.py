"""What an agent pays to find a bug in library code it did not write.

Three hunts, each replayed call by call as an agent decided them from the last
answer, on real libraries fetched from their registries into a temp dir with
one operator changed, the bug three or more calls below the entry point:

  python  python-dateutil (PyPI): `compare = operator.lt` made `operator.le`
          in relativedelta.__init__; members.py reports "kestrel: 11 months,
          tier silver" on its first anniversary (12 and gold expected).
          members.main -> report -> months_between -> relativedelta.__init__
  node    semver (npm): in compareIdentifiers, a numeric identifier sorts
          after an alphanumeric one (`? -1` made `? 1`); releases.js sorts
          1.0.0-2 after 1.0.0-beta.
          main -> newest -> semver.sort -> compareBuild -> SemVer.compare ->
          comparePre -> compareIdentifiers
  hunt    the python bug again, stepped through as issue 31's agent did
          (about 28 calls: a conditional breakpoint, a step into the library,
          steps in a frame of 25 locals, evaluate, set a variable, run to a
          line, restart), once over MCP and once through the CLI.

Per task: calls, bytes (text + structuredContent, compact JSON, as the agent
receives them; for the CLI its stdout), the largest answer, tools/list bytes,
and tokens estimated as bytes / 4.

Run:  python benchmarks/agent_hunt.py [--json] [--task python|node|hunt]
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MEMBERS = '''\
"""Membership report: months of membership and the tier they earn."""
import datetime

from dateutil.relativedelta import relativedelta

TIERS = [(24, "platinum"), (12, "gold"), (6, "silver"), (0, "bronze")]

MEMBERS = {
    "osprey": datetime.date(2023, 1, 10),
    "kestrel": datetime.date(2023, 3, 15),
    "merlin": datetime.date(2021, 7, 1),
}


def months_between(start, end):
    delta = relativedelta(end, start)  # @months
    return delta.years * 12 + delta.months


def tier_for(months):
    for threshold, name in TIERS:
        if months >= threshold:
            return name
    return "none"


def report(name, joined, today):
    months = months_between(joined, today)
    tier = tier_for(months)
    return f"{name}: {months} months, tier {tier}"


def main():
    today = datetime.date(2024, 3, 15)
    for name, joined in MEMBERS.items():
        print(report(name, joined, today))


if __name__ == "__main__":
    main()
'''

RELEASES = '''\
// Which release is newest? 1.0.0-2 must sort before 1.0.0-beta (numeric first).
const semver = require('./semver')

function newest (versions) {
  const sorted = semver.sort(versions.slice())  // @sort
  return sorted[sorted.length - 1]
}

function main () {
  const versions = ['1.0.0-beta', '1.0.0-2', '1.0.0-alpha']
  console.log('newest:', newest(versions))
}

main()
'''


def line_of(path: Path, marker: str, last: bool = False) -> int:
    found = [n for n, text in enumerate(path.read_text().splitlines(), 1) if marker in text]
    if not found:
        raise KeyError(marker)
    return found[-1] if last else found[0]


def prepare(base: Path) -> dict[str, Path]:
    """The two programs and their libraries, each with its one changed operator."""
    py = base / "py"
    py.mkdir()
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(base),
                    "python-dateutil", "six"], check=True)
    for wheel in glob.glob(str(base / "*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(py)
    rd = py / "dateutil" / "relativedelta.py"
    text = rd.read_text()
    assert text.count("compare = operator.lt") == 1
    rd.write_text(text.replace("compare = operator.lt", "compare = operator.le"))
    (py / "members.py").write_text(MEMBERS)
    tasks = {"python": py / "members.py", "relativedelta": rd}
    js = base / "js"
    js.mkdir()
    if shutil.which("npm") and shutil.which("node"):
        packed = subprocess.run(["npm", "pack", "semver@7", "--silent"], cwd=base, check=True,
                                capture_output=True, text=True).stdout.strip().splitlines()[-1]
        with tarfile.open(base / packed) as archive:
            archive.extractall(base / "semver-pkg", filter="data")
        shutil.copytree(base / "semver-pkg" / "package", js / "semver")
        ident = js / "semver" / "internal" / "identifiers.js"
        text = ident.read_text()
        assert text.count("(anum && !bnum) ? -1") == 1
        ident.write_text(text.replace("(anum && !bnum) ? -1", "(anum && !bnum) ? 1"))
        (js / "releases.js").write_text(RELEASES)
        tasks["node"] = js / "releases.js"
        tasks["semver"] = js / "semver" / "classes" / "semver.js"
        tasks["identifiers"] = ident
    return tasks


def python_short(t: dict[str, Path]) -> list[tuple[str, dict]]:
    members, rd = t["python"], t["relativedelta"]
    return [
        ("debug_launch", {"program": str(members), "breakpoints": [{
            "file": str(members), "line": line_of(members, "@months"),
            "condition": "start.month == 3"}]}),
        ("debug_step_into", {}),
        ("debug_run_to", {"file": str(rd), "line": line_of(rd, "while compare(dt1, dtm):")}),
        ("debug_evaluate", {"expression": "(dt1 == dtm, compare)"}),
        ("debug_terminate", {}),
    ]


def node_short(t: dict[str, Path]) -> list[tuple[str, dict]]:
    semver, ident = t["semver"], t["identifiers"]
    return [
        ("debug_launch", {"program": str(t["node"]), "breakpoints": [{
            "file": str(semver), "line": line_of(semver, "return compareIdentifiers(a, b)")}]}),
        ("debug_step_into", {}),
        ("debug_run_to", {"file": str(ident),
                          "line": line_of(ident, "return a === b ? 0", last=True)}),
        ("debug_evaluate", {"expression": "[a, b, anum, bnum]"}),
        ("debug_terminate", {}),
    ]


def python_hunt(t: dict[str, Path]) -> list[tuple[str, dict]]:
    """Issue 31's step-through hunt, call for call."""
    members, rd = t["python"], t["relativedelta"]
    months = line_of(members, "@months")
    loop = line_of(rd, "while compare(dt1, dtm):")
    return [
        ("debug_launch", {"program": str(members), "breakpoints": [{
            "file": str(members), "line": months, "condition": "start.month == 3"}]}),
        ("debug_step_into", {}),
        *[("debug_step_over", {})] * 8,
        ("debug_variables", {"names": ["months", "dt1", "dt2"]}),
        *[("debug_step_over", {})] * 4,
        ("debug_evaluate", {"expression": "(dt1, dt2)"}),
        ("debug_step_over", {}),
        ("debug_variables", {"names": ["compare", "increment"]}),
        ("debug_evaluate", {"expression": "months"}),
        ("debug_breakpoint_list", {}),
        ("debug_restart", {}),
        ("debug_run_to", {"file": str(rd), "line": loop}),
        ("debug_set_variable", {"path": "compare", "value": "operator.lt"}),
        ("debug_step_over", {}),
        ("debug_step_over", {}),
        ("debug_step_out", {}),
        ("debug_activity", {"client": "mcp", "last": 5}),
        ("debug_terminate", {}),
    ]


def cli_hunt(t: dict[str, Path]) -> list[list[str]]:
    """The same hunt through the CLI (the conditional breakpoint is added by
    `break add`, which `start --break` has no flag for)."""
    members, rd = t["python"], t["relativedelta"]
    months = line_of(members, "@months")
    loop = line_of(rd, "while compare(dt1, dtm):")
    return [
        ["start", "--stop-on-entry", str(members)],
        ["break", "add", f"{members}:{months}", "--condition", "start.month == 3"],
        ["continue"],
        ["step"],
        *[["next"]] * 8,
        ["locals", "--names", "months", "dt1", "dt2"],
        *[["next"]] * 4,
        ["print", "(dt1, dt2)"],
        ["next"],
        ["locals", "--names", "compare", "increment"],
        ["print", "months"],
        ["break", "list"],
        ["restart"],
        ["until", f"{rd}:{loop}"],
        ["set", "compare", "operator.lt"],
        ["next"],
        ["next"],
        ["finish"],
        ["activity", "--client", "cli", "--last", "5"],
        ["stop"],
    ]


# ---------------------------------------------------------------------------- peers
#
# The same short hunts through the peers' MCP servers over stdio, each call
# what an agent makes there for the same step (their tools differ: no run-to,
# so a breakpoint and a continue; a condition set after the launch). A call
# may name "{sessionId}", filled from the answer that created the session.


def tdb_python(t: dict[str, Path]) -> list[tuple[str, dict]]:
    """textual-debugger's `tdb-mcp`."""
    members, rd = t["python"], t["relativedelta"]
    return [
        ("debug_launch", {"program": str(members), "stop_on_entry": True,
                          "cwd": str(members.parent)}),
        ("set_breakpoint", {"spec": f"{members}:{line_of(members, '@months')}",
                            "condition": "start.month == 3"}),
        ("control", {"action": "continue"}),
        ("control", {"action": "step_in"}),
        ("set_breakpoint", {"spec": f"{rd}:{line_of(rd, 'while compare(dt1, dtm):')}"}),
        ("control", {"action": "continue"}),
        ("inspect", {"expressions": ["(dt1 == dtm, compare)"]}),
        ("quit", {}),
    ]


def mcpdebugger_calls(t: dict[str, Path], language: str) -> list[tuple[str, dict]]:
    """@debugmcp/mcp-debugger: a session, breakpoints, start, then look and step."""
    if language == "python":
        program, first = t["python"], [(str(t["python"]), line_of(t["python"], "@months"),
                                         "start.month == 3")]
        then = (t["relativedelta"], line_of(t["relativedelta"], "while compare(dt1, dtm):"))
        expression = "(dt1 == dtm, compare)"
    else:
        program = t["node"]
        first = [(str(t["semver"]), line_of(t["semver"], "return compareIdentifiers(a, b)"),
                  None)]
        then = (t["identifiers"], line_of(t["identifiers"], "return a === b ? 0", last=True))
        expression = "[a, b, anum, bnum]"
    sid = {"sessionId": "{sessionId}"}
    return [
        # The Python it runs must have debugpy: this one's (the default, python3
        # on PATH, may not).
        ("create_debug_session", {"language": language, **(
            {"executablePath": sys.executable} if language == "python" else {})}),
        *[("set_breakpoint", {**sid, "file": f, "line": n, **({"condition": c} if c else {})})
          for f, n, c in first],
        ("start_debugging", {**sid, "scriptPath": str(program)}),
        ("get_local_variables", sid),
        ("step_into", sid),
        ("get_stack_trace", sid),
        ("set_breakpoint", {**sid, "file": str(then[0]), "line": then[1]}),
        ("continue_execution", sid),  # answers at once, before the stop
        ("get_local_variables", sid),  # waits for it
        ("evaluate_expression", {**sid, "expression": expression}),
        ("close_debug_session", sid),
    ]


def peer_commands() -> dict[str, list[str]]:
    """The peers found: TDB_MCP and MCP_DEBUGGER name their executables, else PATH."""
    found = {}
    tdb = os.environ.get("TDB_MCP") or shutil.which("tdb-mcp")
    if tdb:
        found["textual-debugger"] = [tdb]
    mcpd = os.environ.get("MCP_DEBUGGER") or shutil.which("mcp-debugger")
    if mcpd:
        found["mcp-debugger"] = [mcpd, "stdio"]
    return found


async def replay_peer(command: list[str], calls: list[tuple[str, dict]], cwd: Path) -> dict:
    import re

    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    rows = []
    filled: dict[str, str] = {}
    # mcp-debugger runs the Python it finds (PYTHON_PATH, else PATH's), which
    # must have debugpy: this one's.
    env = {**os.environ, "PYTHON_PATH": sys.executable, "PYTHON_EXECUTABLE": sys.executable}
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(cwd), env=env)
    async with Client(params) as client:
        tools = (await client.list_tools()).tools
        listed = len(json.dumps([tool.model_dump(mode="json", by_alias=True, exclude_none=True)
                                 for tool in tools], separators=(",", ":")).encode())
        for tool, args in calls:
            args = json.loads(json.dumps(args).replace('"{sessionId}"',
                                                       json.dumps(filled.get("sessionId", ""))))
            started = time.perf_counter()
            result = await client.call_tool(tool, args)
            text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
            found = re.search(r'"sessionId"\s*:\s*"([^"]+)"', text + json.dumps(
                result.structured_content or {}))
            if found and "sessionId" not in filled:
                filled["sessionId"] = found.group(1)
            rows.append({"call": tool, "bytes": answer_bytes(result),
                         "ms": round((time.perf_counter() - started) * 1000, 1),
                         "error": bool(result.is_error), "text": text})
    return summarize(rows, listed)


def answer_bytes(result) -> int:
    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    structured = result.structured_content
    size = len(text.encode())
    if structured is not None:
        size += len(json.dumps(structured, separators=(",", ":"), ensure_ascii=False).encode())
    return size


async def replay_mcp(calls: list[tuple[str, dict]], cwd: Path) -> dict:
    from mcp.client import Client

    from tui_debugger.mcp.server import create_server

    rows = []
    os.chdir(cwd)
    async with create_server() as front:
        async with Client(front.server) as client:
            tools = (await client.list_tools()).tools
            listed = len(json.dumps([tool.model_dump(mode="json", by_alias=True,
                                                     exclude_none=True) for tool in tools],
                                    separators=(",", ":")).encode())
            for tool, args in calls:
                started = time.perf_counter()
                result = await client.call_tool(tool, args)
                rows.append({"call": tool, "bytes": answer_bytes(result),
                             "ms": round((time.perf_counter() - started) * 1000, 1),
                             "error": bool(result.is_error),
                             "text": result.content[0].text if result.content else ""})
    return summarize(rows, listed)


def replay_cli(commands: list[list[str]], cwd: Path) -> dict:
    rows = []
    for words in commands:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "tui_debugger", *words], cwd=cwd,
                              capture_output=True, text=True, timeout=120)
        rows.append({"call": " ".join(words[:2]), "bytes": len(done.stdout.encode()),
                     "ms": round((time.perf_counter() - started) * 1000, 1),
                     "error": done.returncode != 0, "text": done.stdout + done.stderr})
    return summarize(rows, 0)


def summarize(rows: list[dict], listed: int) -> dict:
    total = sum(r["bytes"] for r in rows)
    largest = max(rows, key=lambda r: r["bytes"])
    return {"calls": len(rows), "bytes": total, "tokens": total // 4,
            "largest": {"call": largest["call"], "bytes": largest["bytes"]},
            "tools_list_bytes": listed, "errors": sum(r["error"] for r in rows), "rows": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--task", choices=["python", "node", "hunt"], action="append")
    parser.add_argument("--verbose", action="store_true", help="print each answer's text")
    parser.add_argument("--peers", action="store_true",
                        help="also replay the short hunts through textual-debugger's tdb-mcp and "
                        "@debugmcp/mcp-debugger (TDB_MCP / MCP_DEBUGGER, else on PATH)")
    ns = parser.parse_args()
    wanted = ns.task or ["python", "node", "hunt"]
    base = Path(tempfile.mkdtemp(prefix="tdhunt-", dir="/tmp"))
    os.environ["TUI_DEBUGGER_RUNTIME_DIR"] = str(base / "rt")
    os.environ["TUI_DEBUGGER_STATE_DIR"] = str(base / "state")
    os.environ["TUI_DEBUGGER_PERSIST_BREAKPOINTS"] = "0"
    os.environ["PYTHONPATH"] = str(ROOT)
    report: dict[str, dict] = {}
    try:
        tasks = prepare(base)
        if "python" in wanted:
            report["python (MCP)"] = asyncio.run(replay_mcp(python_short(tasks),
                                                            tasks["python"].parent))
        if "node" in wanted and "node" in tasks:
            report["node (MCP)"] = asyncio.run(replay_mcp(node_short(tasks), tasks["node"].parent))
        peers = peer_commands() if ns.peers else {}
        for peer, command in peers.items():
            if "python" in wanted:
                calls = tdb_python(tasks) if peer == "textual-debugger" else \
                    mcpdebugger_calls(tasks, "python")
                report[f"python ({peer})"] = asyncio.run(replay_peer(
                    command, calls, tasks["python"].parent))
            if "node" in wanted and "node" in tasks and peer == "mcp-debugger":
                report[f"node ({peer})"] = asyncio.run(replay_peer(
                    command, mcpdebugger_calls(tasks, "javascript"), tasks["node"].parent))
        if "hunt" in wanted:
            report["hunt (MCP)"] = asyncio.run(replay_mcp(python_hunt(tasks),
                                                          tasks["python"].parent))
            report["hunt (CLI)"] = replay_cli(cli_hunt(tasks), tasks["python"].parent)
    finally:
        os.chdir(ROOT)
        shutil.rmtree(base, ignore_errors=True)
    if ns.json:
        print(json.dumps(report, indent=2))
        return 0
    for name, figures in report.items():
        print(f"== {name}: {figures['calls']} calls, {figures['bytes']:,} B "
              f"(~{figures['tokens']:,} tokens), largest {figures['largest']['bytes']:,} B "
              f"({figures['largest']['call']}), errors {figures['errors']}"
              + (f", tools/list {figures['tools_list_bytes']:,} B"
                 if figures["tools_list_bytes"] else ""))
        for row in figures["rows"]:
            print(f"   {row['call']:24} {row['bytes']:6,} B {row['ms']:8.1f} ms"
                  + ("  ERROR" if row["error"] else ""))
            if ns.verbose:
                print("      " + row["text"].strip().replace("\n", "\n      ")[:600])
    return 0


if __name__ == "__main__":
    sys.exit(main())
