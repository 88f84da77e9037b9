// A real MCP client for the interop tests: the official TypeScript SDK's
// Client over StdioClientTransport, driven by JSON commands on stdin, one
// per line, and reporting JSON lines on stdout.
//
// Environment: SERVER_CMD is a JSON array (command and arguments) to spawn;
// SERVER_ENV a JSON object of extra environment for it. Or SERVER_URL, a
// remote server to connect to directly, with SERVER_TRANSPORT "http"
// (Streamable HTTP, the default) or "sse" (legacy HTTP+SSE).
// @modelcontextprotocol/sdk is resolved through NODE_PATH.
//
// Commands: {"id":N,"op":"connect"} | {"id":N,"op":"listTools"} |
// {"id":N,"op":"call","name":T,"args":{...},"timeoutMs":M} |
// {"id":N,"op":"request","method":M,"params":{...}} (any other request) |
// {"id":N,"op":"pid"} | {"id":N,"op":"close"}.
// Each gets one reply {"id":N,"ok":true,"result":...,"ms":D} or
// {"id":N,"ok":false,"error":{"code":C,"message":M,"data":X},"ms":D}.
// Commands run concurrently. Events: {"event":"sampling"} when the server
// asks for sampling (the request is held unanswered), {"event":"sampling-cancelled"}
// when it is cancelled, {"event":"closed"} when the transport closes.
"use strict";

const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { CreateMessageRequestSchema, ResultSchema } = require("@modelcontextprotocol/sdk/types.js");
const readline = require("node:readline");

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

const url = process.env.SERVER_URL;
const cmd = url ? null : JSON.parse(process.env.SERVER_CMD);
const extraEnv = JSON.parse(process.env.SERVER_ENV || "{}");

const client = new Client(
  { name: "mcp-heal-interop", version: "1.0.0" },
  { capabilities: { sampling: {} } },
);
client.setRequestHandler(CreateMessageRequestSchema, (req, extra) => {
  emit({ event: "sampling" });
  // Hold the request: the test kills the server while the tool call that
  // asked for it is in flight.
  return new Promise((resolve, reject) => {
    extra.signal.addEventListener("abort", () => {
      emit({ event: "sampling-cancelled" });
      reject(new Error("cancelled"));
    });
  });
});

function remoteTransport() {
  if (process.env.SERVER_TRANSPORT === "sse") {
    const { SSEClientTransport } = require("@modelcontextprotocol/sdk/client/sse.js");
    return new SSEClientTransport(new URL(url));
  }
  const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
  return new StreamableHTTPClientTransport(new URL(url));
}

const transport = url
  ? remoteTransport()
  : new StdioClientTransport({
      command: cmd[0],
      args: cmd.slice(1),
      env: { ...process.env, ...extraEnv },
      stderr: "inherit",
    });
transport.onclose = () => emit({ event: "closed" });

async function run(c) {
  switch (c.op) {
    case "connect":
      await client.connect(transport);
      return { pid: transport.pid, server: client.getServerVersion() };
    case "listTools":
      return await client.listTools();
    case "call":
      return await client.callTool(
        { name: c.name, arguments: c.args || {} },
        undefined,
        { timeout: c.timeoutMs || 30000 },
      );
    case "request":
      return await client.request(
        { method: c.method, params: c.params || {} },
        ResultSchema,
        { timeout: c.timeoutMs || 30000 },
      );
    case "pid":
      return { pid: transport.pid };
    case "close":
      await client.close();
      return {};
    default:
      throw new Error("unknown op " + c.op);
  }
}

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const c = JSON.parse(line);
  const start = Date.now();
  run(c).then(
    (result) => emit({ id: c.id, ok: true, result, ms: Date.now() - start }),
    (err) =>
      emit({
        id: c.id,
        ok: false,
        error: { code: err.code, message: String(err.message), data: err.data },
        ms: Date.now() - start,
      }),
  );
});
rl.on("close", () => {
  client.close().finally(() => process.exit(0));
});
