"""launch.json files of real-world shapes (tests/fixtures/launch/*) resolved into
launch and attach requests for our adapters."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backends.errors import InvalidInput
from tui_debugger.launch_json import (
    find_launch_json,
    list_launch_configs,
    loads_jsonc,
    resolve_launch_config,
    strip_jsonc,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "launch"
PY = FIXTURES / "python"
GO = FIXTURES / "go"
NATIVE = FIXTURES / "native"
NODE = FIXTURES / "node"


# ============================================================================ JSON with comments


def test_comments_and_trailing_commas_outside_strings_only():
    text = """{
      // a line comment with "quotes" and a /* inside
      "url": "https://example.com/path", /* a block
         comment over two lines */
      "glob": "src/**/*.js",
      "quote": "say \\"hi\\" // not a comment",
      "list": [1, 2, 3,],
      "nested": {"a": [ {"b": 1,}, ],},
    }"""
    assert loads_jsonc(text) == {
        "url": "https://example.com/path", "glob": "src/**/*.js",
        "quote": 'say "hi" // not a comment', "list": [1, 2, 3], "nested": {"a": [{"b": 1}]},
    }


def test_a_comma_inside_a_string_before_a_bracket_stays():
    assert loads_jsonc('{"a": ",]", "b": ", }",}') == {"a": ",]", "b": ", }"}


def test_syntax_errors_point_into_the_users_file():
    with pytest.raises(InvalidInput) as err:
        resolve_launch_config("x", str(FIXTURES / "broken"))
    assert "line 4, column 5" in err.value.message
    # Comments are blanked, not removed, so line numbers survive them.
    with pytest.raises(InvalidInput, match="line 4"):
        loads_jsonc('{\n/* one\ntwo */\n "a": }')
    with pytest.raises(InvalidInput, match="never closed"):
        loads_jsonc('{"a": 1 /* oops }')


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet=st.sampled_from('ab/*,]}"\\ \n')),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(alphabet="ab/*,", max_size=4), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_plain_json_passes_through_unchanged(value):
    text = json.dumps(value)
    assert strip_jsonc(text) == text
    assert loads_jsonc(text) == value


# ============================================================================ finding and listing


def test_found_in_the_directory_or_above_it():
    deeper = NODE / "nested" / "deeper"
    assert find_launch_json(str(deeper)) == NODE / ".vscode" / "launch.json"
    cfg = resolve_launch_config("Launch Program", str(deeper))
    assert cfg.workspace == str(NODE)
    assert cfg.program == str(NODE / "app.js")


def test_no_launch_json_says_so(tmp_path: Path):
    with pytest.raises(InvalidInput, match=r"No \.vscode/launch\.json in .* or any directory above"):
        resolve_launch_config("x", str(tmp_path))


def test_listing_names_types_adapters_and_what_cannot_run():
    listed = {c.name: c for c in list_launch_configs(str(PY))}
    assert listed["App with args"].adapter == "debugpy"
    assert listed["Python: Module"].type == "python"
    assert listed["Python: Remote Attach"].request == "attach"
    compound = listed["Server + Client"]
    assert compound.type == "compound" and not compound.supported
    assert "Django, App with args" in compound.note
    native = {c.name: c for c in list_launch_configs(str(NATIVE))}
    assert native["(gdb) Launch"].adapter == "lldb-dap"
    assert not native["(Windows) Launch"].supported


# ============================================================================ python


def test_python_with_args_env_envfile_variables_and_unknown_fields(monkeypatch):
    monkeypatch.setenv("LAUNCH_TEST_VALUE", "from the environment")
    cfg = resolve_launch_config("App with args", str(PY / "src"))
    assert cfg.adapter == "debugpy" and cfg.request == "launch"
    assert cfg.program == str(PY / "src" / "app.py")
    assert cfg.cwd == str(PY / "src")  # "${workspaceFolder}${pathSeparator}src"
    assert cfg.args == ["--name", "python", "--url", "http://example.com/*not-a-comment*/",
                        "--home", os.path.expanduser("~")]
    expected_mode = {"linux": "linux-debug", "darwin": "mac-debug"}.get(sys.platform, "debug")
    assert cfg.env == {
        "FROM_FILE": "file value", "EMPTY": "",  # envFile, overridden by env
        "APP_MODE": expected_mode,  # the platform block merges into env key by key
        "FROM_ENV": "from the environment", "RETRIES": "3", "VERBOSE": "true",
    }
    assert cfg.stop_on_entry is True
    # Adapter fields pass through, unknown ones too (as VS Code passes them), resolved.
    assert cfg.extra == {"justMyCode": False, "someFutureOption": {"nested": [str(PY)]}}
    assert any('"preLaunchTask" ignored' in w for w in cfg.warnings)
    assert not any("presentation" in w for w in cfg.warnings)


def test_current_file_comes_from_the_caller():
    with pytest.raises(InvalidInput) as err:
        resolve_launch_config("Python Debugger: Current File", str(PY))
    assert 'field "program"' in err.value.message and "${file}" in err.value.message
    assert "--launch NAME FILE" in err.value.message
    cfg = resolve_launch_config("Python Debugger: Current File", str(PY / "src"),
                                current_file="app.py")
    assert cfg.program == str(PY / "src" / "app.py")
    assert any("integratedTerminal" in w for w in cfg.warnings)


def test_module_and_string_args_and_interpreter():
    module = resolve_launch_config("Python: Module", str(PY))
    assert module.module == "pkg.main" and module.program is None
    assert module.extra == {"module": "pkg.main", "justMyCode": False}
    assert module.cwd == str(PY / "src")
    django = resolve_launch_config("Django", str(PY))
    assert django.args == ["runserver", "--noreload", "8000"]
    assert django.extra["django"] is True
    assert django.extra["python"] == [sys.executable]  # ${command:python.interpreterPath}
    # child processes are followed: subProcess true is what happens anyway
    assert not any("subProcess" in w for w in django.warnings)
    assert "subProcess" not in django.extra


def test_vscode_prompts_are_errors_naming_the_field_unless_the_caller_gives_the_value():
    with pytest.raises(InvalidInput, match=r'"processId".*pickProcess.*tui-debugger attach PID'):
        resolve_launch_config("Python: Attach using Process Id", str(PY))
    with pytest.raises(InvalidInput, match=r'field "program".*\$\{input:scriptName\} prompts'):
        resolve_launch_config("Ask for input", str(PY))
    with pytest.raises(InvalidInput, match=r'field "args".*pickArgs.*give the arguments'):
        resolve_launch_config("Pick args", str(PY), current_file="src/app.py")
    cfg = resolve_launch_config("Pick args", str(PY), current_file="src/app.py",
                                provided={"args"})
    assert cfg.program == str(PY / "src" / "app.py") and cfg.args == []


def test_remote_attach_maps_connect_and_passes_path_mappings():
    cfg = resolve_launch_config("Python: Remote Attach", str(PY))
    assert (cfg.request, cfg.host, cfg.port, cfg.pid) == ("attach", "localhost", 5678, None)
    assert cfg.extra == {"pathMappings": [{"localRoot": str(PY), "remoteRoot": "."}]}


def test_a_missing_configuration_lists_the_available_ones():
    with pytest.raises(InvalidInput) as err:
        resolve_launch_config("Python: Flask", str(PY))
    assert "No configuration named 'Python: Flask'" in err.value.message
    assert "'App with args'" in err.value.message and "'Django'" in err.value.message
    assert "App with args" in err.value.details["valid"]
    # Names match case-insensitively when nothing matches exactly.
    assert resolve_launch_config("django", str(PY)).name == "Django"


def test_a_compound_names_its_configurations():
    with pytest.raises(InvalidInput) as err:
        resolve_launch_config("Server + Client", str(PY))
    assert "compound" in err.value.message
    assert "'Django', 'App with args'" in err.value.message
    assert "--launch NAME --session NAME" in err.value.message


# ============================================================================ go, native, node


def test_go_auto_mode_is_left_to_the_program_and_remote_attaches_by_port():
    cfg = resolve_launch_config("Launch Package", str(GO), current_file="cmd/main.go")
    assert cfg.adapter == "dlv" and cfg.program == str(GO / "cmd")
    assert "mode" not in cfg.extra
    test = resolve_launch_config("Launch test function", str(GO))
    assert test.extra == {"mode": "test", "buildFlags": "-tags=integration", "showLog": True}
    assert any('"dlvFlags" ignored' in w and "[adapters.dlv]" in w for w in test.warnings)
    attach = resolve_launch_config("Attach to Process", str(GO))
    assert (attach.request, attach.pid, attach.extra) == ("attach", 4242, {"mode": "local"})
    remote = resolve_launch_config("Connect to server", str(GO))
    assert (remote.request, remote.host, remote.port) == ("attach", "127.0.0.1", 2345)
    assert "mode" not in remote.extra  # a port is what makes the backend attach remotely
    assert any('"remotePath" ignored' in w and "substitutePath" in w for w in remote.warnings)


def test_cppdbg_runs_under_lldb_dap_with_its_fields_mapped():
    cfg = resolve_launch_config("(gdb) Launch", str(NATIVE), current_file="src/main.c")
    assert cfg.adapter == "lldb-dap"
    assert cfg.program == str(NATIVE / "build" / "app")
    assert cfg.cwd == str(NATIVE / "src")  # ${fileDirname}
    assert cfg.env == {"LOG_LEVEL": "trace"} and cfg.stop_on_entry is True
    assert cfg.extra == {"sourceMap": [["/build/src", str(NATIVE / "src")]]}
    ignored = " ".join(cfg.warnings)
    for field in ("MIMode", "miDebuggerPath", "setupCommands", "preLaunchTask"):
        assert f'"{field}" ignored' in ignored


def test_codelldb_and_lldb_dap_configurations():
    cfg = resolve_launch_config("Debug (CodeLLDB)", str(NATIVE))
    assert cfg.args == ["--count", "3"] and cfg.env == {"RUST_BACKTRACE": "1"}
    assert cfg.extra == {
        "initCommands": ["settings set target.x86-disassembly-flavor intel"],
        "sourceMap": [["/rustc/abc", os.path.expanduser("~/.rustup/src")]],
    }
    assert any('"sourceLanguages" ignored' in w and "CodeLLDB" in w for w in cfg.warnings)
    with pytest.raises(InvalidInput, match=r'field "cargo".*build first'):
        resolve_launch_config("Debug executable 'demo' (cargo)", str(NATIVE))
    own = resolve_launch_config("lldb-dap launch", str(NATIVE))
    assert own.extra == {"preRunCommands": ["breakpoint set -n main"], "someNewerLldbDapOption": 7}
    assert own.warnings == []
    wait = resolve_launch_config("lldb-dap wait for", str(NATIVE))
    assert (wait.request, wait.wait_for) == ("attach", "app")
    with pytest.raises(InvalidInput, match="Visual Studio"):
        resolve_launch_config("(Windows) Launch", str(NATIVE))


def test_node_configurations():
    cfg = resolve_launch_config("Launch Program", str(NODE))
    assert cfg.adapter == "node" and cfg.extra == {"outDirs": [str(NODE / "dist")]}
    assert any('"skipFiles" ignored' in w for w in cfg.warnings)
    ts = resolve_launch_config("TS with source maps", str(NODE))
    assert ts.type == "pwa-node" and ts.stop_on_entry
    assert ts.extra == {"runtimeExecutable": "node", "runtimeArgs": ["--enable-source-maps"],
                        "outDirs": [str(NODE / "dist")]}
    with pytest.raises(InvalidInput, match=r'field "runtimeExecutable".*npm'):
        resolve_launch_config("Launch via NPM", str(NODE))
    attach = resolve_launch_config("Attach", str(NODE))
    assert (attach.host, attach.port) == ("localhost", 9229)
    with pytest.raises(InvalidInput, match="browser debugging is not supported"):
        resolve_launch_config("Launch Chrome", str(NODE))


def test_unknown_type_and_bad_request(tmp_path: Path):
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "launch.json").write_text(json.dumps({"configurations": [
        {"name": "java", "type": "java", "request": "launch", "mainClass": "App"},
        {"name": "odd", "type": "debugpy", "request": "debug", "program": "a.py"},
        {"name": "multi", "type": "debugpy", "request": "launch",
         "program": "${workspaceFolder:other}/a.py"},
    ]}))
    with pytest.raises(InvalidInput, match=r"'java' is not a debugger we have.*debugpy"):
        resolve_launch_config("java", str(tmp_path))
    with pytest.raises(InvalidInput, match=r'field "request".*"launch" or "attach"'):
        resolve_launch_config("odd", str(tmp_path))
    with pytest.raises(InvalidInput, match="multi-root"):
        resolve_launch_config("multi", str(tmp_path))


# ============================================================================ through the CLI, with debugpy


@pytest.mark.slow
def test_launch_through_the_cli_honours_the_configuration(tmp_path: Path, capsys, monkeypatch,
                                                          no_leftover_processes):
    from tui_debugger.cli.main import main

    proj = tmp_path / "proj"
    (proj / ".vscode").mkdir(parents=True)
    (proj / "run").mkdir()
    (proj / "app.py").write_text(
        "import os, sys\n"
        "print('ARGS', sys.argv[1:])\n"
        "print('ENV', os.environ.get('GREETING'), os.environ.get('FROM_FILE'))\n"
        "print('CWD', os.getcwd())\n"
    )
    (proj / "settings.env").write_text("FROM_FILE=file\n")
    (proj / ".vscode" / "launch.json").write_text("""{
        // as VS Code writes them
        "version": "0.2.0",
        "configurations": [
            {
                "name": "Run app",
                "type": "debugpy",
                "request": "launch",
                "program": "${workspaceFolder}/app.py",
                "args": ["--who", "${workspaceFolderBasename}"],
                "cwd": "${workspaceFolder}/run",
                "env": {"GREETING": "${env:LAUNCH_GREETING}"},
                "envFile": "${workspaceFolder}/settings.env",
                "preLaunchTask": "build", /* not run here */
            },
        ],
    }""")
    monkeypatch.setenv("LAUNCH_GREETING", "hello")
    monkeypatch.chdir(proj / "run")

    def cli(*argv: str) -> str:
        code = main(list(argv))
        out = capsys.readouterr()
        assert code == 0, f"{argv} -> {code}: {out.out}{out.err}"
        return out.out

    assert "Run app  (debugpy, launch, -> debugpy)" in cli("launches")
    cli("start", "--launch", "Run app")
    try:
        cli("await", "--timeout", "20")  # until it ends
        output = cli("output")
    finally:
        cli("stop")
    assert "ARGS ['--who', 'proj']" in output
    assert "ENV hello file" in output
    assert f"CWD {proj / 'run'}" in output
    assert "launch.json 'Run app': \"preLaunchTask\" ignored" in output

    code = main(["start", "--launch", "Run ap"])
    err = capsys.readouterr().err
    assert code == 1 and "No configuration named 'Run ap'" in err and "'Run app'" in err


# ============================================================================ as an agent calls it (debug_launch)


async def test_launch_config_argument_and_an_attach_configuration(tmp_path: Path,
                                                                 no_leftover_processes):
    """debug_launch {launchConfig} with nothing else, and an attach configuration
    (debugpy `connect` + pathMappings) run through the same command."""
    import socket

    from backends.process import spawn
    from tui_debugger.execute import execute
    from tui_debugger.host.hub import Hub

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp_path / ".vscode").mkdir()
    (tmp_path / "app.py").write_text("import time\nfor i in range(600):\n    time.sleep(0.05)\n")
    (tmp_path / ".vscode" / "launch.json").write_text(json.dumps({"configurations": [
        {"name": "App", "type": "python", "request": "launch", "program": "${workspaceFolder}/app.py",
         "stopOnEntry": True},
        {"name": "Attach", "type": "debugpy", "request": "attach",
         "connect": {"host": "127.0.0.1", "port": port},
         "pathMappings": [{"localRoot": "${workspaceFolder}", "remoteRoot": "${workspaceFolder}"}]},
    ]}))

    hub = Hub(serve=False)
    with pytest.raises(InvalidInput, match="Give the program to debug"):
        await execute(hub, "launch", {}, origin="mcp", client_cwd=str(tmp_path))
    listener = await spawn([sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}",
                            str(tmp_path / "app.py")], what="debugpy listener",
                           stdout=None, stderr=None)
    try:
        launched = await execute(hub, "launch", {"launchConfig": "App"}, origin="mcp",
                                 client_cwd=str(tmp_path))
        assert launched.adapter == "debugpy" and launched.program == str(tmp_path / "app.py")
        waited = await execute(hub, "await", {"timeoutMs": 20_000}, origin="mcp",
                               session=hub.sessions[launched.session])
        assert waited.status == "stopped" and waited.stop.reason == "entry"  # stopOnEntry honoured

        # No waiting for the listener: the backend retries the connection.
        attached = await execute(hub, "launch", {"launchConfig": "Attach", "sessionName": "att"},
                                 origin="mcp", client_cwd=str(tmp_path))
        assert attached.session == "att" and attached.state in ("running", "stopped")
        session = hub.sessions["att"]
        assert session.attach_request.port == port
        assert session.attach_request.extra == {"pathMappings": [
            {"localRoot": str(tmp_path), "remoteRoot": str(tmp_path)}]}
        paused = await execute(hub, "pause", {}, origin="mcp", session=session)
        assert paused.status == "stopped"
    finally:
        await hub.close_all()
        await listener.kill_group()


def test_remote_attach_fields_of_each_adapter(tmp_path):
    """The adapters' own fields for a server on another host, as their users write them."""
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "launch.json").write_text(json.dumps({"configurations": [
        {"name": "go", "type": "go", "request": "attach", "mode": "remote", "host": "10.0.0.2",
         "port": 2345, "substitutePath": [{"from": "${workspaceFolder}", "to": "/build"}]},
        {"name": "c", "type": "lldb-dap", "request": "attach", "program": "${workspaceFolder}/a",
         "gdb-remote-hostname": "10.0.0.2", "gdb-remote-port": 1234,
         "sourceMap": [["/build", "${workspaceFolder}"]]},
        {"name": "node", "type": "node", "request": "attach", "address": "10.0.0.2", "port": 9229,
         "remoteRoot": "/srv/app", "localRoot": "${workspaceFolder}"},
    ]}))
    go = resolve_launch_config("go", str(tmp_path))
    assert (go.adapter, go.host, go.port) == ("dlv", "10.0.0.2", 2345)
    assert go.extra == {"substitutePath": [{"from": str(tmp_path), "to": "/build"}]}
    c = resolve_launch_config("c", str(tmp_path))
    assert (c.adapter, c.host, c.port, c.pid) == ("lldb-dap", "10.0.0.2", 1234, None)
    assert c.extra["sourceMap"] == [["/build", str(tmp_path)]]
    node = resolve_launch_config("node", str(tmp_path))
    assert (node.host, node.port, node.warnings) == ("10.0.0.2", 9229, [])
    assert node.extra == {"remoteRoot": "/srv/app", "localRoot": str(tmp_path)}
