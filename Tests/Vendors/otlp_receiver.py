#!/usr/bin/env python3
"""An OTLP/HTTP trace receiver for the tests, judged by the OpenTelemetry
project's own protobuf definitions (the opentelemetry-proto package).

POST /v1/traces takes an ExportTraceServiceRequest in binary protobuf, as a
collector does, and answers an ExportTraceServiceResponse. What arrived is
served back for the test to read:
  GET /spans  every span decoded, as a JSON list
  GET /raw    every export body as received, latin-1 text (for a leak scan)

With --discard (the load benchmark's collector) nothing is decoded or kept:
each export is read, counted and answered, and GET /stats says how many
exports and bytes arrived. That mode needs no package beyond Python.

Prints "listening on 127.0.0.1:<port>" once it accepts connections.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DISCARD = "--discard" in sys.argv[1:]
if not DISCARD:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )
    from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

stats = {"exports": 0, "bytes": 0}
received_spans = []
received_bodies = []
lock = threading.Lock()


def plain(any_value):
    """An AnyValue as the Python value it holds."""
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [plain(item) for item in any_value.array_value.values]
    if kind == "kvlist_value":
        return {item.key: plain(item.value) for item in any_value.kvlist_value.values}
    if kind == "bytes_value":
        return any_value.bytes_value.hex()
    return getattr(any_value, kind)


def decoded(span, resource, scope):
    return {
        "trace_id": span.trace_id.hex(),
        "span_id": span.span_id.hex(),
        "parent_span_id": span.parent_span_id.hex(),
        "name": span.name,
        "kind": Span.SpanKind.Name(span.kind),
        "start_unix_nano": span.start_time_unix_nano,
        "end_unix_nano": span.end_time_unix_nano,
        "attributes": {item.key: plain(item.value) for item in span.attributes},
        "events": [event.name for event in span.events],
        "status": Status.StatusCode.Name(span.status.code),
        "resource": resource,
        "scope": scope,
    }


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.path != "/v1/traces":
            return self.answer(404, b"", "text/plain")
        if self.headers.get("Content-Type") != "application/x-protobuf":
            return self.answer(415, b"", "text/plain")
        with lock:
            stats["exports"] += 1
            stats["bytes"] += len(body)
        if DISCARD:
            # An empty ExportTraceServiceResponse is zero bytes.
            return self.answer(200, b"", "application/x-protobuf")
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        spans = []
        for resource_spans in request.resource_spans:
            resource = {item.key: plain(item.value) for item in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    spans.append(decoded(span, resource, scope_spans.scope.name))
        with lock:
            received_spans.extend(spans)
            received_bodies.append(body)
        self.answer(200, ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf")

    def do_GET(self):
        with lock:
            if self.path == "/spans":
                return self.answer(200, json.dumps(received_spans).encode(), "application/json")
            if self.path == "/stats":
                return self.answer(200, json.dumps(stats).encode(), "application/json")
            if self.path == "/raw":
                return self.answer(200, b"".join(received_bodies), "application/octet-stream")
        self.answer(404, b"", "text/plain")

    def answer(self, status, body, content_type):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    print(f"listening on 127.0.0.1:{server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
