"""Fault suite: a program that reads stdin never hangs its session. By default
it reads end of file on every backend; with the launch option `stdin` it reads
the file the user chose."""

from __future__ import annotations

import pytest

from tests.support import require
from tests.support.mcp import call, in_process_client, write_program

PY = """
import sys
line = sys.stdin.readline()
print("stdin: got " + line if line else "stdin: eof", end="" if line else "\\n", flush=True)
"""
JS = """
let data = "";
process.stdin.on("data", (chunk) => { data += chunk; });
process.stdin.on("end", () => {
  console.log(data ? "stdin: got " + data.split("\\n")[0] : "stdin: eof");
});
"""


def _program(adapter: str, tmp_path) -> str:
    from tests.support.native_build import c_program, go_program

    if adapter == "debugpy":
        return str(write_program(tmp_path, "reads.py", PY))
    if adapter == "node":
        import shutil

        require(shutil.which("node") is not None, "node")
        return str(write_program(tmp_path, "reads.js", JS))
    if adapter == "dlv":
        from backends.adapters import find_dlv

        require(find_dlv() is not None, "dlv")
        return str(go_program("go_stdin"))
    from backends.adapters import find_lldb, find_lldb_dap

    require((find_lldb() if adapter == "lldb-cli" else find_lldb_dap()) is not None, adapter)
    return str(c_program("native_stdin"))


@pytest.mark.parametrize("adapter", [
    "lldb-dap", "dlv", pytest.param("debugpy", marks=pytest.mark.slow),
    pytest.param("lldb-cli", marks=pytest.mark.slow), pytest.param("node", marks=pytest.mark.slow),
])
async def test_stdin_is_end_of_file_or_the_chosen_file(adapter, tmp_path, mcp_env,
                                                       no_leftover_processes):
    program = _program(adapter, tmp_path)
    given = tmp_path / "input.txt"
    given.write_text("hello from a file\n")
    async with in_process_client() as client:
        for stdin, expected in ((None, "stdin: eof"), (str(given), "stdin: got hello from a file")):
            args = {"program": program, "adapter": adapter}
            if stdin:
                args["stdin"] = stdin
            await call(client, "debug_launch", args)
            ended = await call(client, "debug_wait", {"timeoutMs": 20_000})
            assert ended["status"] == "terminated", (adapter, stdin, ended.text)
            output = await call(client, "debug_output", {})
            # The answer's data (structuredContent) holds the output; its text is one line.
            shown = "".join(e["text"] for e in output["entries"])
            assert expected in shown, (adapter, stdin, output.data)
