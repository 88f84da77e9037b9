// A single-threaded stdio MCP server with state (issue 30), plain Node, no
// SDK. It handles one message at a time, in order: while a call waits (a
// sleep, as a slow fetch or a database query would), nothing else is
// handled, pings included, and nothing tells waiting from hung.
//
//   wait {seconds}  waits, then adds one to the state: "state=N pid=P"
//   state           the state and pid: "state=N pid=P"
//
// Flags: --log FILE appends "start PID" to FILE at start and "call NAME PID"
// as a call begins (a test counts the processes and sees a call arrive);
// --idle-exit S exits with code 0 once S seconds passed with
// no message and no call running, as on-demand servers do;
// --stopped-child starts a background child of its own (a sleep, its
// output elsewhere: a job it paused, a build), SIGSTOPs it and logs
// "child PID" once it is stopped; the child is killed when the server exits.
const fs = require("fs");
const { spawn } = require("child_process");
const readline = require("readline");

const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const logFile = flag("--log");
const log = (line) => { if (logFile) fs.appendFileSync(logFile, line + " " + process.pid + "\n"); };
const idleExit = Number(flag("--idle-exit") || 0);
log("start");
if (args.includes("--stopped-child")) {
  const child = spawn("sleep", ["600"], { stdio: "ignore" });
  process.on("exit", () => { try { child.kill("SIGKILL"); } catch {} });
  child.on("spawn", () => {
    process.kill(child.pid, "SIGSTOP");
    if (logFile) fs.appendFileSync(logFile, "child " + child.pid + "\n");
  });
}

let state = 0;
const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
const said = () => ({ content: [{ type: "text", text: "state=" + state + " pid=" + process.pid }] });
const tools = [
  { name: "wait", description: "Waits the given seconds (a slow fetch), then adds one to the state.", inputSchema: { type: "object", properties: { seconds: { type: "number" } }, required: ["seconds"] } },
  { name: "state", description: "Says the state and the pid.", inputSchema: { type: "object", properties: {} } },
];

async function handle(m) {
  if (m.id === undefined || !m.method) return; // notifications: cancelled or not, the call runs on
  switch (m.method) {
    case "initialize":
      send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "waiting", version: "1" } } });
      return;
    case "ping":
      send({ jsonrpc: "2.0", id: m.id, result: {} });
      return;
    case "tools/list":
      send({ jsonrpc: "2.0", id: m.id, result: { tools } });
      return;
    case "tools/call":
      log("call " + m.params.name);
      if (m.params.name === "wait") {
        await new Promise((done) => setTimeout(done, 1000 * Number(m.params.arguments.seconds)));
        state++;
      }
      send({ jsonrpc: "2.0", id: m.id, result: said() });
      return;
    default:
      send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no " + m.method } });
  }
}

// One message at a time: the next is handled once the one before is done.
const queue = [];
let busy = false;
let idle;
function armIdle() {
  if (!idleExit) return;
  clearTimeout(idle);
  idle = setTimeout(() => { if (!busy && queue.length === 0) process.exit(0); }, 1000 * idleExit);
}
async function drain() {
  if (busy) return;
  busy = true;
  while (queue.length > 0) {
    let m;
    try { m = JSON.parse(queue.shift()); } catch { continue; }
    await handle(m);
  }
  busy = false;
  armIdle();
}
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => { clearTimeout(idle); queue.push(line); drain(); });
rl.on("close", () => process.exit(0));
armIdle();
