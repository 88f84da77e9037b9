// Spawns a hook command the way Claude Code 2.1.332 runs an exec-form hook
// (child_process spawn of `command` with `args`, no shell, windowsHide),
// under Bun for Windows, the runtime Claude Code is built on. Prints one
// JSON line: what the child printed, its status, or the spawn error.
// $HOOK_INPUT, when set, names the file fed to the hook's stdin (the
// payload).
const { spawnSync } = require("node:child_process");
const { readFileSync } = require("node:fs");
const [command, ...args] = process.argv.slice(2);
const input = process.env.HOOK_INPUT ? readFileSync(process.env.HOOK_INPUT) : "";
const r = spawnSync(command, args, { windowsHide: true, encoding: "utf8", input });
console.log(JSON.stringify({ stdout: r.stdout ?? "", status: r.status, error: r.error ? String(r.error) : "" }));
