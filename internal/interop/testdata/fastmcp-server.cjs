// A FastMCP (the TypeScript framework, npm "fastmcp") server over its
// Streamable HTTP transport on 127.0.0.1:$PORT/mcp, for the third-party
// suite: a read-only tool and one that changes state held in memory.
// fastmcp and zod are resolved through NODE_PATH.
"use strict";

const { FastMCP } = require("fastmcp");
const { z } = require("zod");

const server = new FastMCP({ name: "mcp-heal-fastmcp", version: "1.0.0" });
let count = 0;

server.addTool({
  name: "add",
  description: "Adds two numbers",
  parameters: z.object({ a: z.number(), b: z.number() }),
  annotations: { readOnlyHint: true },
  execute: async ({ a, b }) => String(a + b),
});

server.addTool({
  name: "increment",
  description: "Adds one to a counter held in memory and returns it",
  parameters: z.object({}),
  annotations: { readOnlyHint: false, idempotentHint: false },
  execute: async () => String(++count),
});

server.start({
  transportType: "httpStream",
  httpStream: { port: Number(process.env.PORT), host: "127.0.0.1", endpoint: "/mcp" },
});
