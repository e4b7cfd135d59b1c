// Preloaded into the MCP server (node --require ./loopback.cjs) by the
// interop tests. server-everything's Streamable HTTP transport calls
// app.listen(PORT) without a host, which binds every interface; this makes
// every TCP listen in the process bind 127.0.0.1 instead, and writes the
// address actually bound to stderr as "rpcload-interop: listening on
// 127.0.0.1:PORT", so PORT=0 (an ephemeral port, no race) can be used.
"use strict";
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  let port = null;
  if (typeof first === "number" || (typeof first === "string" && first !== "" && !Number.isNaN(Number(first)))) {
    port = Number(first);
  } else if (first && typeof first === "object" && first.path === undefined) {
    port = Number(first.port || 0);
  }
  if (port === null) {
    return listen.apply(this, args); // a Unix socket or pipe: left alone
  }
  const cb = args.find((a) => typeof a === "function");
  this.once("listening", () => {
    const a = this.address();
    process.stderr.write(`rpcload-interop: listening on ${a.address}:${a.port}\n`);
  });
  return cb ? listen.call(this, port, "127.0.0.1", cb) : listen.call(this, port, "127.0.0.1");
};
