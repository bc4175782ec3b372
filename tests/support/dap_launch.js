// An editor that launches its program through `tui-debugger dap`, played by
// VS Code's own DAP test client: over stdio, or (with PORT and TOKEN) on the
// port of `tui-debugger dap --listen`. One JSON line per step on stdout; it
// waits for a line on stdin before it disconnects ("restart": it restarts the
// program first, and waits for another).
//
//   node dap_launch.js MODULE_DIR TUI_DEBUGGER PROGRAM BREAK_LINE [PORT TOKEN]
"use strict";
const path = require("path");
const readline = require("readline");
const [moduleDir, adapter, program, breakLine, port, token] = process.argv.slice(2);
const { DebugClient } = require(path.join(moduleDir, "@vscode/debugadapter-testsupport"));
const say = (step, body) => process.stdout.write(JSON.stringify({ step, ...body }) + "\n");
const input = readline.createInterface({ input: process.stdin });
const nextLine = () => new Promise((r) => input.once("line", r));

async function main() {
  const dc = new DebugClient(adapter, "dap", "tui-debugger", { env: process.env }, true);
  dc.defaultTimeout = 60000;
  const stopped = dc.waitForEvent("stopped", 60000);
  const initialized = dc.waitForEvent("initialized", 60000);
  await (port ? dc.start(Number(port)) : dc.start());
  await dc.initializeRequest({ adapterID: "tui-debugger", clientID: "neovim",
    linesStartAt1: true, columnsStartAt1: true, pathFormat: "path" });
  let refused = null;
  if (port) {
    // Without the token nothing of a session is reached.
    refused = await dc.attachRequest({}).then(() => null, (err) => String(err.message || err));
  }
  await dc.launchRequest({ program, ...(token ? { token } : {}) });
  await initialized;
  const bps = await dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line: Number(breakLine) }] });
  await dc.configurationDoneRequest();
  const stop = await stopped;
  const stack = await dc.stackTraceRequest({ threadId: stop.body.threadId, levels: 5 });
  const top = stack.body.stackFrames[0];
  say("launched", { refused, breakpoints: bps.body.breakpoints, stop: stop.body,
    at: { line: top.line, path: top.source && top.source.path, name: top.name } });
  if ((await nextLine()) === "restart") {
    const again = dc.waitForEvent("stopped", 60000);
    await dc.restartRequest({});
    const stop2 = (await again).body;
    const top2 = (await dc.stackTraceRequest({ threadId: stop2.threadId, levels: 5 })).body.stackFrames[0];
    say("restarted", { stop: stop2, at: { line: top2.line, name: top2.name } });
    await nextLine();
  }
  await dc.disconnectRequest({});
  say("left", {});
  process.exit(0);
}

main().catch((err) => { say("error", { message: String(err && err.stack || err) }); process.exit(1); });
