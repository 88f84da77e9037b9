#!/usr/bin/env python3
"""MCP servers whose silence during a call is no hang (issue 23), standard
library only. One tool, sleep(seconds), answers "slept N s in pid P".

    kinds.py single              one thread reading stdin line by line: a
                                 ping waits behind the call
    kinds.py blocked             asyncio, the tool a plain blocking call on
                                 the event loop (as FastMCP runs a plain
                                 `def` tool): nothing is read meanwhile
    kinds.py async               asyncio, the tool awaits: pings answered
                                 during the call
    kinds.py threaded-ignoring   a thread per request; methods it does not
                                 know (server/discover, ping) are dropped
                                 without an answer
"""
import asyncio
import json
import os
import sys
import threading
import time

KIND = sys.argv[1]
VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
TOOLS = [{
    "name": "sleep",
    "description": "Sleeps for the given number of seconds, then says so.",
    "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]},
}]
out = threading.Lock()


def send(msg):
    with out:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def result(mid, r):
    send({"jsonrpc": "2.0", "id": mid, "result": r})


def answer(m):
    """The result of a request other than tools/call, None when unknown."""
    method = m.get("method")
    if method == "initialize":
        v = (m.get("params") or {}).get("protocolVersion")
        return {"protocolVersion": v if v in VERSIONS else VERSIONS[0],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "kind-" + KIND, "version": "1.0.0"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    return None


def seconds(m):
    return ((m.get("params") or {}).get("arguments") or {}).get("seconds", 0)


def slept(secs):
    return {"content": [{"type": "text", "text": "slept %s s in pid %d" % (secs, os.getpid())}]}


def reply(m):
    r = answer(m)
    if r is None:
        send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "method not found: " + str(m.get("method"))}})
    else:
        result(m["id"], r)


def requests():
    for line in sys.stdin:
        m = json.loads(line)
        if "id" in m and "method" in m:
            yield m


def single():
    for m in requests():
        if m["method"] == "tools/call":
            time.sleep(seconds(m))
            result(m["id"], slept(seconds(m)))
        else:
            reply(m)


def threaded_ignoring():
    def handle(m):
        if m["method"] == "tools/call":
            time.sleep(seconds(m))
            result(m["id"], slept(seconds(m)))
        else:
            result(m["id"], answer(m))
    for m in requests():
        if m["method"] == "ping" or (m["method"] != "tools/call" and answer(m) is None):
            continue  # not known here: dropped, never answered
        threading.Thread(target=handle, args=(m,), daemon=True).start()


async def serve(block):
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    tasks = set()

    async def handle(m):
        if m["method"] == "tools/call":
            if block:
                time.sleep(seconds(m))  # a plain def tool, run on the loop
            else:
                await asyncio.sleep(seconds(m))
            result(m["id"], slept(seconds(m)))
        else:
            reply(m)

    while True:
        line = await reader.readline()
        if not line:
            return
        m = json.loads(line)
        if "id" in m and "method" in m:
            t = asyncio.create_task(handle(m))
            tasks.add(t)
            t.add_done_callback(tasks.discard)


if KIND == "single":
    single()
elif KIND == "threaded-ignoring":
    threaded_ignoring()
elif KIND in ("blocked", "async"):
    asyncio.run(serve(KIND == "blocked"))
else:
    sys.exit("unknown kind: " + KIND)
