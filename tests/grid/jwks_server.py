#!/usr/bin/python3
"""A token issuer's HTTPS endpoints on loopback for pxferd's JWKS tests: GET
/.well-known/openid-configuration names jwks_uri on this server, GET /jwks.json serves JWKS_FILE.
Listens on 127.0.0.1, an ephemeral port written to PORT_FILE once it listens.

Usage: jwks_server.py CERT KEY JWKS_FILE PORT_FILE   (the certificate names 127.0.0.1)
"""
import http.server
import json
import ssl
import sys


def main(cert, key, jwks_file, port_file):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            base = "https://127.0.0.1:%d" % self.server.server_address[1]
            if self.path == "/.well-known/openid-configuration":
                body = json.dumps({"issuer": base + "/", "jwks_uri": base + "/jwks.json"}).encode()
            elif self.path == "/jwks.json":
                with open(jwks_file, "rb") as f:
                    body = f.read()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt, *args):
            sys.stderr.write("jwks_server: " + (fmt % args) + "\n")

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: jwks_server.py CERT KEY JWKS_FILE PORT_FILE")
    main(*sys.argv[1:])
