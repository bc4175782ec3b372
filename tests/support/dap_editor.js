// An editor's side of `tui-debugger dap`, played by VS Code's own DAP test
// client (@vscode/debugadapter-testsupport). It attaches to the live session
// and reports each step as one JSON line on stdout; between steps it waits
// for a line on stdin, so the test can act in the CLI and an MCP client meanwhile.
//
//   node dap_editor.js MODULE_DIR TUI_DEBUGGER FILE BREAK_LINE
"use strict";
const path = require("path");
const readline = require("readline");
const [moduleDir, adapter, file, breakLine] = process.argv.slice(2);
const { DebugClient } = require(path.join(moduleDir, "@vscode/debugadapter-testsupport"));

const input = readline.createInterface({ input: process.stdin });
const lines = [];
let waiting = null;
input.on("line", (line) => { if (waiting) { const w = waiting; waiting = null; w(line); } else lines.push(line); });
const nextLine = () => lines.length ? Promise.resolve(lines.shift()) : new Promise((r) => { waiting = r; });
const say = (step, body) => process.stdout.write(JSON.stringify({ step, ...body }) + "\n");

// Every event as it comes, so none is missed between two waits.
const seen = {};
const waiters = {};
function track(dc, name) {
  seen[name] = [];
  dc.on(name, (event) => {
    const w = (waiters[name] || []).shift();
    if (w) w(event); else seen[name].push(event);
  });
}
function next(name, ms = 30000) {
  if (seen[name].length) return Promise.resolve(seen[name].shift());
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${name} event within ${ms} ms`)), ms);
    (waiters[name] = waiters[name] || []).push((e) => { clearTimeout(timer); resolve(e); });
  });
}

async function where(dc, threadId) {
  const stack = await dc.stackTraceRequest({ threadId, levels: 20 });
  const top = stack.body.stackFrames[0];
  return { frameId: top.id, line: top.line, path: top.source && top.source.path, name: top.name };
}

async function main() {
  const dc = new DebugClient(adapter, "dap", "tui-debugger", { env: process.env }, true);
  dc.defaultTimeout = 30000;
  for (const name of ["stopped", "continued", "breakpoint", "output", "terminated", "initialized"]) track(dc, name);
  await dc.start();
  const init = await dc.initializeRequest({ adapterID: "tui-debugger", clientID: "vscode",
    linesStartAt1: true, columnsStartAt1: true, pathFormat: "path" });
  await dc.attachRequest({});
  await next("initialized");
  const bps = await dc.setBreakpointsRequest({ source: { path: file }, breakpoints: [{ line: Number(breakLine) }] });
  await dc.setExceptionBreakpointsRequest({ filters: [] });
  await dc.configurationDoneRequest();
  const first = await next("stopped");
  const threadId = first.body.threadId;
  say("attached", { capabilities: init.body, breakpoints: bps.body.breakpoints,
    stop: first.body, at: await where(dc, threadId) });

  await nextLine(); // the CLI steps meanwhile
  const cliStep = await next("stopped");
  const resumed = await next("continued", 5000).then((e) => e.body, () => null);
  say("cli-step", { stop: cliStep.body, continued: resumed, at: await where(dc, cliStep.body.threadId) });

  await nextLine();
  seen.continued = [];
  await dc.nextRequest({ threadId });
  const own = await next("stopped");
  const at = await where(dc, own.body.threadId);
  const ownResumed = seen.continued.length;  // DAP: not told for its own step
  const scopes = await dc.scopesRequest({ frameId: at.frameId });
  const locals = scopes.body.scopes[0];
  const vars = await dc.variablesRequest({ variablesReference: locals.variablesReference });
  const nested = vars.body.variables.find((v) => v.variablesReference > 0);
  const children = nested ? (await dc.variablesRequest({ variablesReference: nested.variablesReference })).body.variables : [];
  const evaluated = await dc.evaluateRequest({ expression: "count + 100", frameId: at.frameId, context: "repl" });
  const completed = await dc.completionsRequest({ text: "cou", column: 4, frameId: at.frameId });
  const set = await dc.setVariableRequest({ variablesReference: locals.variablesReference, name: "count", value: "41" });
  say("own-step", { stop: own.body, at, scopes: scopes.body.scopes.map((s) => s.name),
    variables: vars.body.variables, nested: nested && nested.name, children,
    evaluated: evaluated.body, set: set.body, completed: completed.body.targets, ownResumed });

  seen.breakpoint = []; // those told on joining: the next is the agent's
  await nextLine(); // the CLI and the agent look; the agent adds a breakpoint
  const told = await next("breakpoint");
  say("told", { breakpoint: told.body });

  await nextLine();
  // Its own line with a condition now, and the agent's line as well; then none.
  const conditioned = await dc.setBreakpointsRequest({ source: { path: file },
    breakpoints: [{ line: Number(breakLine), condition: "n > 2" }, { line: Number(breakLine) + 1 }] });
  const cleared = await dc.setBreakpointsRequest({ source: { path: file }, breakpoints: [] });
  say("cleared", { conditioned: conditioned.body.breakpoints, breakpoints: cleared.body.breakpoints,
    first: bps.body.breakpoints[0].id });

  await nextLine();
  await dc.disconnectRequest({});
  say("left", {});
  process.exit(0);
}

main().catch((err) => { say("error", { message: String(err && err.stack || err) }); process.exit(1); });
