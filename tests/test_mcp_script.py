"""`debug-script` through the MCP client: seeds/002's request and response
contract on Node, and the same tool on Python (debugpy) and native (lldb)
programs, with each language's type names. Nothing may be left running."""

from __future__ import annotations

import socket
import sys

import pytest

from tests.support import require, require_executable
from tests.support.native_build import c_program
from tests.support.mcp import PROGRAMS, Answer, fails, in_process_client, line_of, write_program

SCRIPT_JS = PROGRAMS / "node" / "script_target.js"
SPIN_JS = PROGRAMS / "node" / "spin.js"
NATIVE_DEMO = PROGRAMS / "native_demo.c"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def script(client, command: str, file, line: int, expression: str, timeout: int = 15_000) -> Answer:
    return Answer(await client.call_tool("debug-script", {
        "command": command, "breakpoint": {"file": str(file), "line": line},
        "expression": expression, "timeout": timeout,
    }))


def assert_seed_success(answer: Answer) -> list[dict]:
    raw = answer.raw.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert not answer.is_error, answer
    assert raw["content"] == []
    assert list(raw["structuredContent"]) == ["results"]
    for hit in raw["structuredContent"]["results"]:
        assert set(hit) == {"type", "value"}
    return raw["structuredContent"]["results"]


def assert_seed_error(answer: Answer, message: str) -> None:
    raw = answer.raw.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert raw["isError"] is True
    assert raw["structuredContent"] == {"error": message}
    assert raw["content"] == [{"type": "text", "text": message}]


# ============================================================================ Python


@pytest.mark.slow
async def test_python_values_with_python_type_names(mcp_env, tmp_path, no_leftover_processes):
    program = write_program(tmp_path, "values.py", """
        class Thing:
            def __repr__(self):
                return "Thing()"


        def show(value):
            return value  # @show


        for v in [7, "two", 3.5, None, True, [1, "a"], {"k": {"n": [1, 2]}}, (1, 2), Thing()]:
            show(v)
    """)
    async with in_process_client() as client:
        answer = await script(client, f"{sys.executable} {program}", program,
                              line_of(program, "@show"), "value")
        results = assert_seed_success(answer)
    assert results == [
        {"type": "int", "value": 7},
        {"type": "str", "value": "two"},
        {"type": "float", "value": 3.5},
        {"type": "NoneType", "value": None},
        {"type": "bool", "value": True},
        {"type": "list", "value": [1, "a"]},
        {"type": "dict", "value": {"k": {"n": [1, 2]}}},
        {"type": "tuple", "value": [1, 2]},
        {"type": "Thing", "value": "Thing()"},
    ]


@pytest.mark.slow
async def test_python_relative_paths_bare_script_and_expression_errors(mcp_env, monkeypatch,
                                                                       no_leftover_processes):
    """`app.py ARGS` without the interpreter; relative paths from the server's
    directory; an expression that raises is an entry, not a failure."""
    monkeypatch.chdir(PROGRAMS)
    loop_line = line_of(PROGRAMS / "py_basic.py", "@loop-body")
    async with in_process_client() as client:
        sums = assert_seed_success(await script(client, "py_basic.py", "py_basic.py", loop_line,
                                                "acc + i * 100"))
        assert sums == [{"type": "int", "value": v} for v in (0, 102, 206)]
        errors = assert_seed_success(await script(client, "python3 -u py_basic.py", "py_basic.py",
                                                  loop_line, "undefined_name"))
        assert errors[0] == {"type": "error", "value": "NameError: name 'undefined_name' is not defined"}


@pytest.mark.slow
async def test_python_the_two_errors(mcp_env, tmp_path, no_leftover_processes):
    program = write_program(tmp_path, "never.py", """
        import sys, time


        def unused():
            return 1  # @never


        if len(sys.argv) > 1:
            time.sleep(30)
    """)
    line = line_of(program, "@never")
    async with in_process_client() as client:
        exited = await script(client, f"python {program}", program, line, "1")
        assert_seed_error(exited, "Process exited before breakpoint was hit")
        timed_out = await script(client, f"python {program} sleep", program, line, "1", timeout=1500)
        assert_seed_error(timed_out, "Timeout waiting for breakpoint after 1500ms")
        # Not one of the seed's two outcomes: a typed error that says what to do.
        bad = await fails(client, "debug-script", {
            "command": "python -c 'print(1)'", "breakpoint": {"file": str(program), "line": 1},
            "expression": "1", "timeout": 1000}, "invalid_input", "save it to a file")
        assert set(bad.data) == {"error", "code"}
        await fails(client, "debug-script", {
            "command": f"python {program}", "breakpoint": {"file": str(program), "line": "x"},
            "expression": "1", "timeout": 1000}, "invalid_input", "breakpoint.line")


# ============================================================================ native


@pytest.mark.slow
async def test_native_values_with_c_type_names(mcp_env, no_leftover_processes):
    from backends.adapters import find_lldb_dap

    require(find_lldb_dap() is not None, "lldb-dap")
    binary = c_program("native_demo")
    loop_line = line_of(NATIVE_DEMO, "LINE:loop_body")
    async with in_process_client() as client:
        structs = assert_seed_success(await script(client, str(binary), NATIVE_DEMO, loop_line, "origin"))
        assert len(structs) == 5
        assert structs[0]["type"] in ("point", "struct point")
        assert structs[0]["value"] == {"x": 3, "y": 4, "label": "origin"}
        ints = assert_seed_success(await script(client, str(binary), NATIVE_DEMO, loop_line, "i * 2"))
        assert ints == [{"type": "int", "value": v} for v in (0, 2, 4, 6, 8)]


async def test_native_without_lldb_dap_uses_the_lldb_cli(mcp_env, monkeypatch, no_leftover_processes):
    from backends import adapters

    require(adapters.find_lldb() is not None, "lldb")
    monkeypatch.setattr(adapters, "find_lldb_dap", lambda: None)
    binary = c_program("native_demo")
    async with in_process_client() as client:
        labels = assert_seed_success(await script(client, str(binary), NATIVE_DEMO,
                                                  line_of(NATIVE_DEMO, "LINE:loop_body"), "origin.label"))
    assert labels == [{"type": "const char *", "value": "origin"}] * 5


async def test_go_values_with_go_type_names(mcp_env, no_leftover_processes):
    from backends.adapters import find_dlv

    from tests.support.native_build import go_program

    require(find_dlv() is not None, "dlv")
    binary = go_program("go_demo")
    source = PROGRAMS / "go_demo.go"
    async with in_process_client() as client:
        structs = assert_seed_success(await script(client, str(binary), source,
                                                   line_of(source, "LINE:loop_body"), "origin"))
        assert structs[0] == {"type": "main.Point", "value": {"X": 3, "Y": 4, "Label": "origin"}}
        pointers = assert_seed_success(await script(client, str(binary), source,
                                                    line_of(source, "LINE:call_square"), "p"))
        assert pointers == [{"type": "*main.Point", "value": {"X": 3, "Y": 4, "Label": "origin"}}]


# ============================================================================ Node (seeds/002 itself)


@pytest.fixture
def node():
    return require_executable("node")


async def test_node_primitives_and_objects(mcp_env, node, no_leftover_processes):
    line = line_of(SCRIPT_JS, "@mark visit")
    async with in_process_client() as client:
        numbers = assert_seed_success(await script(
            client, f"node --inspect-brk={free_port()} {SCRIPT_JS}", SCRIPT_JS, line, "ratio"))
        assert numbers == [{"type": "number", "value": v} for v in (0.5, 1, 1.5)]
        labels = assert_seed_success(await script(
            client, f"node --inspect-brk={free_port()} {SCRIPT_JS}", SCRIPT_JS, line, "label"))
        assert labels == [{"type": "string", "value": f"item-{i}"} for i in (1, 2, 3)]
        objects = assert_seed_success(await script(
            client, f"node --inspect-brk={free_port()} {SCRIPT_JS}", SCRIPT_JS, line, "item"))
        assert objects == [
            {"type": "object", "value": {"id": 1, "tags": ["a"]}},
            {"type": "object", "value": {"id": 2, "tags": ["b", "c"]}},
            {"type": "object", "value": {"id": 3, "tags": []}},
        ]


async def test_node_the_two_errors(mcp_env, node, no_leftover_processes):
    async with in_process_client() as client:
        timed_out = await script(client, f"node --inspect-brk={free_port()} {SPIN_JS}", SCRIPT_JS,
                                 line_of(SCRIPT_JS, "@mark visit"), "item", timeout=1200)
        assert_seed_error(timed_out, "Timeout waiting for breakpoint after 1200ms")
        exited = await script(client, f"node --inspect-brk={free_port()} {SCRIPT_JS}", SCRIPT_JS,
                              line_of(SCRIPT_JS, "@mark never"), "1", timeout=15_000)
        assert_seed_error(exited, "Process exited before breakpoint was hit")


def test_error_strings_match_the_node_implementation():
    from backends.cdp import script as cdp_script

    from tui_debugger import script

    assert script.TIMEOUT_MESSAGE == cdp_script.TIMEOUT_MESSAGE
    assert script.EXITED_MESSAGE == cdp_script.EXITED_MESSAGE


# ============================================================================ moved breakpoints


async def test_python_a_moved_breakpoint_reports_no_values_of_another_line(
        mcp_env, tmp_path, no_leftover_processes):
    # debugpy moves a breakpoint on a line without code to the next line with
    # some; a stop there is not a hit of the requested line.
    program = PROGRAMS / "py_basic.py"
    length = len(program.read_text().splitlines())
    async with in_process_client() as client:
        for line in (length + 60, line_of(program, "@no-code"), 2):
            answer = await script(client, f"python {program}", program, line, "1")
            assert_seed_error(answer, "Process exited before breakpoint was hit")


async def test_node_a_moved_breakpoint_reports_no_values_of_another_line(
        mcp_env, node, tmp_path, no_leftover_processes):
    program = write_program(tmp_path, "moved.js", """
        function never(x) {
          const doubled = x * 2;
          return doubled;
        }

        function called(i) {
          return i + 1;
        }
        for (let i = 0; i < 3; i++) called(i);
    """)
    async with in_process_client() as client:
        for line in (2, 5, 40):  # in a function never called; blank; past the end
            answer = await script(client, f"node --inspect-brk={free_port()} {program}",
                                  program, line, "i")
            assert_seed_error(answer, "Process exited before breakpoint was hit")
        hits = assert_seed_success(await script(
            client, f"node --inspect-brk={free_port()} {program}", program, 7, "i"))
        assert hits == [{"type": "number", "value": v} for v in (0, 1, 2)]


async def test_node_without_inspect_brk_falls_back_to_the_default_port(
        mcp_env, node, no_leftover_processes):
    # seeds/002: the port comes from --inspect-brk=PORT, else 9229.
    line = line_of(SCRIPT_JS, "@mark visit")
    async with in_process_client() as client:
        for command in (f"node {SCRIPT_JS}", str(SCRIPT_JS)):
            labels = assert_seed_success(await script(client, command, SCRIPT_JS, line, "label"))
            assert labels == [{"type": "string", "value": f"item-{i}"} for i in (1, 2, 3)]



async def test_timeout_is_a_number(mcp_env, tmp_path, no_leftover_processes):
    program = write_program(tmp_path, "quick.py", """
        total = 0
        for i in range(2):
            total += i  # @here
    """)
    line = line_of(program, "@here")
    async with in_process_client() as client:
        hits = assert_seed_success(await script(client, f"python {program}", program, line, "i",
                                                timeout=15_000.5))
        assert hits == [{"type": "int", "value": 0}, {"type": "int", "value": 1}]
        await fails(client, "debug-script", {
            "command": f"python {program}", "breakpoint": {"file": str(program), "line": line},
            "expression": "i", "timeout": "3000"}, "invalid_input", "timeout")
