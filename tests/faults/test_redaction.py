"""Fault suite: secrets stay out of transcripts: credentials inside URLs (in
values and output), short names such as `pw`, and the source lines `context`
shows."""

from __future__ import annotations

import json

from tests.support.mcp import call, in_process_client, line_of, write_program

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
        if stopped.get("status") != "stopped":
            assert (await call(client, "debug_wait", {"timeoutMs": 15_000}))["status"] == "stopped"
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
        assert "admin:[REDACTED]@db.example" in answers[-1].text
        await call(client, "debug_terminate", {})
