// An editor that follows child processes as child debug sessions: VS Code's
// own DAP test client attaches to the live session through `tui-debugger dap`,
// answers the adapter's startDebugging request as VS Code does (a second
// adapter process, attached with the configuration it was given), and reports
// where the child session stopped. One JSON line per step on stdout.
//
//   node dap_children.js MODULE_DIR TUI_DEBUGGER
"use strict";
const path = require("path");
const [moduleDir, adapter] = process.argv.slice(2);
const { DebugClient } = require(path.join(moduleDir, "@vscode/debugadapter-testsupport"));
const say = (step, body) => process.stdout.write(JSON.stringify({ step, ...body }) + "\n");

function client() {
  const dc = new DebugClient(adapter, "dap", "tui-debugger", { env: process.env }, true);
  dc.defaultTimeout = 60000;
  return dc;
}

async function join(dc, configuration) {
  const initialized = dc.waitForEvent("initialized", 60000);
  await dc.start();
  await dc.initializeRequest({ adapterID: "tui-debugger", clientID: "vscode", linesStartAt1: true,
    columnsStartAt1: true, pathFormat: "path", supportsStartDebuggingRequest: true });
  const stopped = dc.waitForEvent("stopped", 60000);
  await dc.attachRequest(configuration);
  await initialized;
  await dc.configurationDoneRequest();
  return { stopped }; // not awaited here: a running parent has no stop to tell
}

async function main() {
  const parent = client();
  // The test client knows no reverse requests: catch startDebugging, answer it.
  const asked = new Promise((resolve) => {
    const dispatch = parent.dispatch.bind(parent);
    parent.dispatch = (body) => {
      const message = JSON.parse(body);
      if (message.type === "request") {
        parent.outputStream.write(frame({ type: "response", seq: 0, request_seq: message.seq,
          command: message.command, success: message.command === "startDebugging" }));
        if (message.command === "startDebugging") resolve(message.arguments);
        return;
      }
      dispatch(body);
    };
  });
  await join(parent, {});
  const request = await Promise.race([asked, new Promise((_, no) => setTimeout(() => no(new Error("no startDebugging within 60 s")), 60000))]);
  const child = client();
  const stop = (await (await join(child, request.configuration)).stopped).body;
  const top = (await child.stackTraceRequest({ threadId: stop.threadId, levels: 5 })).body.stackFrames[0];
  say("child", { request, stop, at: { line: top.line, path: top.source && top.source.path } });
  await child.disconnectRequest({});
  await parent.disconnectRequest({});
  process.exit(0);
}

function frame(message) {
  const json = JSON.stringify(message);
  return `Content-Length: ${Buffer.byteLength(json, "utf8")}\r\n\r\n${json}`;
}

main().catch((err) => { say("error", { message: String(err && err.stack || err) }); process.exit(1); });
