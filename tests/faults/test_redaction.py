"""Fault suite: secrets stay out of transcripts: credentials inside URLs (in
values and output), short names such as `pw`, and the source lines `context`
shows."""

from __future__ import annotations

import json

import pytest

from tests.support.mcp import PROGRAMS, Answer, call, in_process_client, line_of, write_program

PROGRAM = """
pw = "hunter2secret"
url = "postgres://admin:s3cr3tpw@db.example:5432/app"
password = "letmein-now"  # shown by context, two lines above the stop
print("connecting to", url, flush=True)
print("done")  # STOP
"""
SECRETS = ("hunter2secret", "s3cr3tpw", "letmein-now")


async def test_secrets_are_redacted_everywhere(tmp_path, mcp_env, no_leftover_processes):
    program = write_program(tmp_path, "secrets.py", PROGRAM)
    async with in_process_client() as client:
        stopped = await call(client, "debug_launch", {
            "program": str(program), "breakpoints": [f"{program}:{line_of(program, '# STOP')}"]})
        if "stop" not in stopped:
            assert "stop" in (await call(client, "debug_wait", {"timeoutMs": 15_000}))
        answers = [stopped,
                   await call(client, "debug_context", {"lines": 5}),
                   await call(client, "debug_variables", {}),
                   await call(client, "debug_evaluate", {"expression": "url"}),
                   await call(client, "debug_evaluate", {"expression": "pw"}),
                   await call(client, "debug_output", {})]
        for answer in answers:
            seen = answer.text + json.dumps(answer.data)
            for secret in SECRETS:
                assert secret not in seen, (secret, seen[:500])
        # MCP answers are lean: the output is in structuredContent, the text one line.
        assert "admin:[REDACTED]@db.example" in json.dumps(answers[-1].data)
        await call(client, "debug_terminate", {})


# --------------------------------------------------------------------------- round two

TEXTS = {
    "a PGP private key block": ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGPgpKeyBody\n"
                                "=abcd\n-----END PGP PRIVATE KEY BLOCK-----\n", "PgpKeyBody"),
    "Authorization: Basic": ("GET / HTTP/1.1\nAuthorization: Basic dXNlcjpodW50ZXIy\n",
                             "dXNlcjpodW50ZXIy"),
    "JSON escaped inside a C string": (
        '0x0000555555556004 "{\\"db_password\\":\\"hunter2\\",\\"user\\":\\"app\\"}"',
        "hunter2"),
    "JSON escaped inside a Go string": ('"{\\"api_key\\": \\"k3y-secret-value\\"}"',
                                        "k3y-secret-value"),
    "a PEM key cut before its END": ("key: -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA"
                                     "CutShortKeyMaterial…", "CutShortKeyMaterial"),
    "a PEM key's tail without its BEGIN": ("QmFzZTY0S2V5VGFpbA==\n-----END PRIVATE KEY-----\n",
                                           "QmFzZTY0S2V5VGFpbA"),
    "a URL password holding an @": ("postgres://admin:p@ss@db.example:5432/app", "ss@db"),
    "a JWT": ("token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJlU2VjcmV0 sent",
              "c2lnbmF0dXJlU2VjcmV0"),
    "a Cookie header": ("Cookie: sessionid=s3ss10nS3cret; theme=dark", "s3ss10nS3cret"),
    "a Set-Cookie header": ("Set-Cookie: sid=31d4d96e407aad42; Path=/; Secure",
                            "31d4d96e407aad42"),
}


@pytest.mark.parametrize("case", list(TEXTS))
def test_the_text_patterns_of_round_two(case):
    from tui_debugger.redact import redact

    text, secret = TEXTS[case]
    assert secret not in redact(text), redact(text)


def test_ordinary_text_stays():
    from tui_debugger.redact import redact

    for text in ("basic functionality works", "the cookie jar", "token_count = 5",
                 "https://example.com:8080/path@v2", "bypass=yes"):
        assert redact(text) == text


@pytest.mark.parametrize("adapter", ["lldb-cli", "lldb-dap", "dlv"])
async def test_escaped_json_in_native_strings(adapter, mcp_env, no_leftover_processes):
    """A string holding JSON is shown with its quotes escaped; the key's secret is
    hidden in variables, evaluate and the program's output alike."""
    from backends.adapters import find_dlv, find_lldb, find_lldb_dap

    from tests.support import require
    from tests.support.native_build import c_program, go_program

    found = {"lldb-cli": find_lldb, "lldb-dap": find_lldb_dap, "dlv": find_dlv}[adapter]()
    require(found is not None, adapter)
    if adapter == "dlv":
        binary, source, secrets = (go_program("go_secrets"), PROGRAMS / "go_secrets.go",
                                   ("hunter2-go", "YWRtaW46aHVudGVyMi1nb2Jhc2lj"))
    else:
        binary, source, secrets = (c_program("native_secrets"), PROGRAMS / "native_secrets.c",
                                   ("hunter2-native", "YWRtaW46aHVudGVyMi1iYXNpYw",
                                    "NativeSecretKeyMaterial"))
    async with in_process_client() as client:
        await call(client, "debug_launch", {
            "program": str(binary), "adapter": adapter,
            "breakpoints": [f"{source}:{line_of(source, 'LINE:print')}"]})
        assert "stop" in (await call(client, "debug_wait", {"timeoutMs": 30_000}))
        answers = [await call(client, "debug_variables", {}),
                   await call(client, "debug_evaluate", {"expression": "config"}),
                   await call(client, "debug_evaluate", {"expression": "header"})]
        assert "db_password" in answers[1].text  # the value is there, its secret is not
        await call(client, "debug_continue", {"waitMs": 15_000}, ok=False)
        answers.append(await call(client, "debug_output", {}))
        for answer in answers:
            seen = answer.text + json.dumps(answer.data)
            for secret in secrets:
                assert secret not in seen, (secret, seen[:800])
        await call(client, "debug_terminate", {}, ok=False)


TRACED = """
import time

def handle(password, settings):
    return len(password) + len(settings)  # TRACE

for n in range(4):
    handle("letmein-%d" % n, {"api_key": "k3y-%d-secret" % n, "retries": n})
    time.sleep(0.3)  # the second trace catches a later hit
"""


async def test_trace_and_script_redact_as_evaluate_does(tmp_path, mcp_env,
                                                        no_leftover_processes):
    program = write_program(tmp_path, "traced.py", TRACED)
    line = line_of(program, "# TRACE")
    secrets = [f"{kind}-{n}" for kind in ("letmein", "k3y") for n in range(4)]
    async with in_process_client() as client:
        await call(client, "debug_launch", {"program": str(program), "stopOnEntry": True})
        await call(client, "debug_wait", {"timeoutMs": 15_000})
        answers = [await call(client, "debug_trace", {"file": str(program), "line": line,
                                                      "expression": expr, "maxHits": 1})
                   for expr in ("password", "settings")]
        await call(client, "debug_terminate", {}, ok=False)
        # the same through debug-script: a dict's values, and a name-only secret
        for expr in ("settings", "password"):
            answers.append(Answer(await client.call_tool("debug-script", {
                "command": f"python {program}", "breakpoint": {"file": str(program), "line": line},
                "expression": expr, "timeout": 15_000})))
    for answer in answers:
        seen = answer.text + json.dumps(answer.data)
        for secret in secrets:
            assert secret not in seen, (secret, seen[:800])
    # what is not secret is still shown
    assert '"retries": ' in json.dumps(answers[1].data), answers[1]
