// Loaded into every Node process of a launched program (NODE_OPTIONS --require),
// so that its child processes (child_process.fork, or spawn/exec of node) are
// debugged too: each child opens an inspector on 127.0.0.1 on a free port, tells
// the debugger its address through a FIFO in a directory only this user can
// reach, and waits for the debugger before it runs its own code, so that
// breakpoints are set before its first line. (docs/architecture.md, "Child
// processes".) The process the debugger started itself is left alone, apart
// from keeping its own --inspect flags out of the children it forks.
'use strict';
(function followChildren() {
  const env = process.env;
  const fifo = env.TUI_DEBUGGER_NODE_CHILDREN;
  if (!fifo) return;
  try {
    // A worker thread is debugged through its process's inspector, not as a process.
    if (!require('worker_threads').isMainThread) return;
  } catch (e) { /* no worker_threads: a main thread */ }
  if (env.TUI_DEBUGGER_NODE_ROOT === '1') {
    delete env.TUI_DEBUGGER_NODE_ROOT;
    // fork() passes process.execArgv on: the debugger's --inspect-brk would
    // make each child wait on an inspector nobody is told of.
    process.execArgv = process.execArgv.filter((a) => !a.startsWith('--inspect'));
    return;
  }
  let inspector;
  let fs;
  try {
    inspector = require('inspector');
    fs = require('fs');
  } catch (e) {
    return;
  }
  let opened = false;
  if (!inspector.url()) {
    try {
      inspector.open(0, '127.0.0.1', false);
      opened = true;
    } catch (e) {
      return;
    }
  }
  const url = inspector.url();
  if (!url) return;
  let fd;
  try {
    // Non-blocking: with nobody reading (the session is gone) this fails at once.
    fd = fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
    const line = JSON.stringify({
      pid: process.pid, ppid: process.ppid, url: url,
      argv: process.argv.slice(1, 12).map((a) => String(a).slice(0, 200)),
    }) + '\n';
    fs.writeSync(fd, line);  // one write below PIPE_BUF: never interleaved
  } catch (e) {
    if (opened) inspector.close();
    return;
  } finally {
    if (fd !== undefined) {
      try { fs.closeSync(fd); } catch (e) { /* closed */ }
    }
  }
  if (opened) inspector.waitForDebugger();
})();
