// An MCP server on the TypeScript SDK whose one tool, sleep(seconds), is
// synchronous: the event loop is blocked for the whole call, so nothing
// (a ping included) is read or answered meanwhile. With BUSY=1 the tool
// computes (a busy loop: CPU time) instead of waiting. The SDK and zod are
// resolved through NODE_PATH.
"use strict";

const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { z } = require("zod");

const busy = process.env.BUSY === "1";
const cell = new Int32Array(new SharedArrayBuffer(4));
const server = new McpServer({ name: "kind-node-blocked", version: "1.0.0" });

server.registerTool(
  "sleep",
  { description: "Sleeps for the given number of seconds, then says so.", inputSchema: { seconds: z.number() } },
  async ({ seconds }) => {
    if (busy) {
      const end = Date.now() + seconds * 1000;
      while (Date.now() < end) {}
    } else {
      Atomics.wait(cell, 0, 0, seconds * 1000);
    }
    return { content: [{ type: "text", text: `slept ${seconds} s in pid ${process.pid}` }] };
  },
);

server.connect(new StdioServerTransport());
