"""What a test or a benchmark reads of the TUI in a browser tab: xterm.js paints
on a canvas, so the page's screen is read from the websocket bytes it receives."""

import re

#: An init script: keeps every websocket chunk the page receives, with the wall
#: clock, in window.__screen as [seconds, text] (before xterm.js draws it).
RECORD_SCREEN = """
window.__screen = [];
const listen = WebSocket.prototype.addEventListener;
WebSocket.prototype.addEventListener = function (type, handler, options) {
  if (type !== "message") return listen.call(this, type, handler, options);
  const decoder = new TextDecoder();
  return listen.call(this, type, (event) => {
    if (typeof event.data !== "string")
      window.__screen.push([Date.now() / 1000, decoder.decode(event.data, {stream: true})]);
    return handler(event);
  }, options);
};
"""
#: Terminal escape sequences, stripped to read the text drawn.
ESCAPES = re.compile(r"\x1b(\[[0-9;?<>=$]*[A-Za-z~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z])")
