// A stdio MCP server for the line-length experiments (linelimit_test.go,
// cut_test.go): tool "big" answers with one line of exactly `bytes` bytes
// (without its newline); with `cut`, it writes only the first `cut` bytes
// of that line and SIGKILLs itself (a server killed mid-answer); with
// `broken`, it writes the first `broken` bytes, ends the line there, then
// answers the call with an error and runs on (what a relay does with an
// answer it cut). Tool "peek" is "big" marked read-only; with `cutOnce`
// (a file) it cuts only while that file is missing, and makes it. Tool
// "echo" returns its text and this process's pid.
// Plain Node, no SDK: the line is written as given, in one write; a cut
// line is written whole to the pipe before the kill (writeAllSync:
// process.stdout would queue what the pipe does not take at once, and the
// kill would drop it).
const readline = require("readline");
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
const fs = require("fs");
// writeAllSync writes all of s to stdout before it returns, waiting while
// the pipe is full.
const writeAllSync = (s) => {
  const buf = Buffer.from(s);
  for (let off = 0; off < buf.length; ) {
    try {
      off += fs.writeSync(1, buf, off);
    } catch (e) {
      if (e.code !== "EAGAIN") throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }
};
const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
rl.on("line", (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined || !m.method) return;
  switch (m.method) {
    case "initialize":
      send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "bigline", version: "1" } } });
      break;
    case "tools/list":
      send({ jsonrpc: "2.0", id: m.id, result: { tools: [
        { name: "big", description: "Answers with one line of the given length.", inputSchema: { type: "object", properties: { bytes: { type: "number" }, cut: { type: "number" }, broken: { type: "number" } } } },
        { name: "peek", description: "big, read-only; with cutOnce (a file), cut only while the file is missing (then made).", annotations: { readOnlyHint: true }, inputSchema: { type: "object", properties: { bytes: { type: "number" }, cut: { type: "number" }, cutOnce: { type: "string" } } } },
        { name: "echo", description: "Returns its text.", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
      ] } });
      break;
    case "tools/call": {
      const args = m.params.arguments || {};
      if (m.params.name === "echo") {
        send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: String(args.text) + " pid " + process.pid }] } });
        break;
      }
      const frame = (text) => JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text }] } });
      const pad = args.bytes - Buffer.byteLength(frame(""));
      const line = frame("x".repeat(Math.max(0, pad)));
      if (args.cut && args.cutOnce) {
        if (fs.existsSync(args.cutOnce)) args.cut = 0;
        else fs.writeFileSync(args.cutOnce, "");
      }
      if (args.cut) {
        writeAllSync(line.slice(0, args.cut));
        process.kill(process.pid, "SIGKILL");
      }
      if (args.broken) {
        process.stdout.write(line.slice(0, args.broken) + "\n");
        send({ jsonrpc: "2.0", id: m.id, error: { code: -32603, message: "the answer was cut after " + args.broken + " bytes" } });
        break;
      }
      process.stdout.write(line + "\n");
      break;
    }
    default:
      send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no " + m.method } });
  }
});
