// An editor that attaches to the live session through `tui-debugger dap` and
// steps once, played by VS Code's own DAP test client; for sessions of any
// backend (lldb-dap, node). One JSON line per step on stdout; it waits for a
// line on stdin before it steps and before it disconnects.
//
//   node dap_follow.js MODULE_DIR TUI_DEBUGGER [WATCH]
// With WATCH (a local's name), the step is a data breakpoint on it and a continue.
// Its last line "ended" (not "go"): it waits for the session's end instead of leaving.
"use strict";
const path = require("path");
const readline = require("readline");
const [moduleDir, adapter, watch] = process.argv.slice(2);
const { DebugClient } = require(path.join(moduleDir, "@vscode/debugadapter-testsupport"));
const say = (step, body) => process.stdout.write(JSON.stringify({ step, ...body }) + "\n");
const input = readline.createInterface({ input: process.stdin });
const nextLine = () => new Promise((r) => input.once("line", r));

async function look(dc, threadId) {
  const stack = await dc.stackTraceRequest({ threadId, levels: 20 });
  const top = stack.body.stackFrames[0];
  const scopes = (await dc.scopesRequest({ frameId: top.id })).body.scopes;
  const vars = (await dc.variablesRequest({ variablesReference: scopes[0].variablesReference })).body.variables;
  return { line: top.line, path: top.source && top.source.path, name: top.name,
    scopes: scopes.map((s) => s.name), variables: vars.map((v) => [v.name, v.value, v.variablesReference > 0]) };
}

async function main() {
  const dc = new DebugClient(adapter, "dap", "tui-debugger", { env: process.env }, true);
  dc.defaultTimeout = 60000;
  const initialized = dc.waitForEvent("initialized", 60000);
  const ended = dc.waitForEvent("terminated", 300000);
  ended.catch(() => null);
  await dc.start();
  await dc.initializeRequest({ adapterID: "tui-debugger", clientID: "vscode", linesStartAt1: true,
    columnsStartAt1: true, pathFormat: "path" });
  const first = dc.waitForEvent("stopped", 60000);
  await dc.attachRequest({});
  await initialized;
  await dc.configurationDoneRequest();
  const stop = (await first).body;
  say("attached", { stop, at: await look(dc, stop.threadId) });
  await nextLine();
  const after = dc.waitForEvent("stopped", 60000);
  let data = null;
  if (watch) {
    const top = (await dc.stackTraceRequest({ threadId: stop.threadId, levels: 1 })).body.stackFrames[0];
    const scopes = (await dc.scopesRequest({ frameId: top.id })).body.scopes;
    const info = (await dc.dataBreakpointInfoRequest({ variablesReference: scopes[0].variablesReference, name: watch })).body;
    const set = (await dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: info.dataId, accessType: "write" }] })).body;
    data = { info, set: set.breakpoints };
    await dc.continueRequest({ threadId: stop.threadId });
  } else {
    await dc.nextRequest({ threadId: stop.threadId });
  }
  const stepped = (await after).body;
  say("stepped", { stop: stepped, at: await look(dc, stepped.threadId), data });
  if ((await nextLine()) === "ended") {  // someone else ends the session: the editor is told
    await ended;
    say("ended", {});
    process.exit(0);
  }
  await dc.disconnectRequest({});
  say("left", {});
  process.exit(0);
}

main().catch((err) => { say("error", { message: String(err && err.stack || err) }); process.exit(1); });
