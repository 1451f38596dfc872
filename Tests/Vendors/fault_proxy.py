"""The network between an app and the gateway, with its faults on demand.

    python3 fault_proxy.py <gateway port>

Listens on 127.0.0.1 (any free port, printed as `listening on 127.0.0.1:<port>`)
and forwards each HTTP/1.1 request to the gateway on its own connection,
answering with `Connection: close`, so no client library retries a request
on a kept connection by itself. Requests under /__proxy/ are the test's:

- POST /__proxy/rules {"drop_refresh_answers": n, "hold_refresh_answers": bool,
  "delay_ms": n, "refuse": bool}: drop the answers of the next n refreshes
  after the gateway sent them (the client's connection is closed without a
  byte), hold refreshes' answers (the gateway has answered) until released,
  delay every request before forwarding it, or close every connection at once.
- POST /__proxy/release: let the held answers go.
- GET /__proxy/held?count=n: answers once n refresh answers are held.
- GET /__proxy/stats: {"most_refreshes_in_flight": n}, the most refreshes
  between their arrival and their answer's delivery at any moment.
- GET /__proxy/log: every request forwarded, held or refused, in order:
  {"path", "kind" (credentials.type, else the path), "status", "dropped"}.
"""
import asyncio
import json
import sys

rules = {"drop_refresh_answers": 0, "hold_refresh_answers": False, "delay_ms": 0, "refuse": False}
in_flight = {"now": 0, "most": 0}
log = []
held = []
held_changed = None


async def read_message(reader, is_request):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = await reader.readexactly(length) if length else b""
    return lines[0], head, headers, body


def kind_of(path, body):
    try:
        credentials = json.loads(body).get("credentials") or {}
        return credentials.get("type") or path
    except (ValueError, AttributeError):
        return path


def answer(writer, status, payload):
    body = json.dumps(payload).encode()
    writer.write(
        f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
        + body)


async def control(method, path, body, writer):
    global held
    if path == "/__proxy/rules":
        rules.update(json.loads(body or b"{}"))
        answer(writer, 200, rules)
    elif path == "/__proxy/release":
        released, held = held, []
        for event in released:
            event.set()
        answer(writer, 200, {"released": len(released)})
    elif path.startswith("/__proxy/held"):
        count = int(path.split("count=")[1]) if "count=" in path else 1
        async with held_changed:
            await held_changed.wait_for(lambda: len(held) >= count)
        answer(writer, 200, {"held": len(held)})
    elif path == "/__proxy/stats":
        answer(writer, 200, {"most_refreshes_in_flight": in_flight["most"]})
    elif path == "/__proxy/log":
        answer(writer, 200, log)
    else:
        answer(writer, 404, {"error": "unknown control path"})


async def forward(upstream_port, head, body):
    reader, writer = await asyncio.open_connection("127.0.0.1", upstream_port)
    try:
        writer.write(head + body)
        await writer.drain()
        status_line, answer_head, headers, answer_body = await read_message(reader, False)
        return status_line, answer_head, answer_body
    finally:
        writer.close()


async def relay(upstream_port, head, body, refresh, entry, writer):
    if rules["delay_ms"]:
        await asyncio.sleep(rules["delay_ms"] / 1000)
    status_line, answer_head, answer_body = await forward(upstream_port, head, body)
    entry["status"] = int(status_line.split(" ")[1])
    if refresh and rules["drop_refresh_answers"] > 0:
        rules["drop_refresh_answers"] -= 1
        entry["dropped"] = True
        return
    if refresh and rules["hold_refresh_answers"]:
        event = asyncio.Event()
        async with held_changed:
            held.append(event)
            held_changed.notify_all()
        await event.wait()
    lines = [line for line in answer_head.decode("latin-1").split("\r\n") if line and not line.lower().startswith("connection:")]
    writer.write(("\r\n".join(lines) + "\r\nconnection: close\r\n\r\n").encode("latin-1") + answer_body)
    await writer.drain()


async def serve(upstream_port, reader, writer):
    try:
        request_line, head, headers, body = await read_message(reader, True)
        method, path, _ = request_line.split(" ", 2)
        if path.startswith("/__proxy/"):
            await control(method, path, body, writer)
            await writer.drain()
            return
        kind = kind_of(path, body)
        entry = {"path": path, "kind": kind, "status": None, "dropped": False}
        log.append(entry)
        if rules["refuse"]:
            entry["dropped"] = True
            return
        refresh = kind == "refresh_token"
        if refresh:
            in_flight["now"] += 1
            in_flight["most"] = max(in_flight["most"], in_flight["now"])
        try:
            await relay(upstream_port, head, body, refresh, entry, writer)
        finally:
            if refresh:
                in_flight["now"] -= 1
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main():
    global held_changed
    held_changed = asyncio.Condition()
    upstream_port = int(sys.argv[1])
    server = await asyncio.start_server(lambda r, w: serve(upstream_port, r, w), "127.0.0.1", 0)
    print(f"listening on 127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
