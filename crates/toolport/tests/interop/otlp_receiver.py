"""An OTLP/HTTP traces receiver for the tests: decodes each export with the
official OpenTelemetry protobuf definitions (PyPI opentelemetry-proto) and
prints every span as one JSON line.

usage: otlp_receiver.py     (prints "listening PORT" first; stops on stdin EOF)
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.path != "/v1/traces" or self.headers.get("content-type") != "application/x-protobuf":
            self.send_response(400)
            self.end_headers()
            return
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            resource = {a.key: value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    line = {
                        "service": resource.get("service.name"),
                        "name": span.name,
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "attributes": {a.key: value(a.value) for a in span.attributes},
                    }
                    print(json.dumps(line), flush=True)
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(f"listening {server.server_address[1]}", flush=True)
sys.stdin.read()
server.shutdown()
