"""The client against a scripted loopback HTTP server: signing, errors, retries, timeout."""
import http.server
import json
import os
import socket
import threading
import unittest
from unittest import mock

from rpcctl import ApiError, Client, ConfigError, NetworkError, verify


class _Server:
    """Answers each request with the next scripted (status, headers, body) and records it."""

    def __init__(self):
        self.script = []
        self.seen = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _any(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                outer.seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body})
                status, headers, text = outer.script.pop(0) if outer.script else (200, {}, '{"ok":true}')
                if status == "hang":
                    threading.Event().wait(1.0)
                    return
                data = text.encode("utf-8")
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.server = _Server()
        self.sleeps = []
        self.client = Client("key-1", "secret-1", self.server.url + "/", sleep=self.sleeps.append)

    def tearDown(self):
        self.server.close()

    def test_signs_the_exact_bytes_it_sends_and_not_the_query(self):
        self.client.create_endpoint("main ✓", network_id=1, env_slug="mainnet")
        self.client.endpoints_usage(days=7)
        post, get = self.server.seen
        self.assertEqual(post["headers"]["Content-Type"], "application/json")
        self.assertEqual(json.loads(post["body"]), {"name": "main ✓", "network_id": 1, "env_slug": "mainnet"})
        for req in (post, get):
            h = req["headers"]
            self.assertEqual(h["X-Api-Key"], "key-1")
            self.assertTrue(verify("secret-1", h["X-Timestamp"], req["method"], req["path"], req["body"], h["X-Signature"]))
        self.assertEqual(get["path"], "/v1/endpoints/usage?days=7")
        self.assertEqual(get["body"], b"")

    def test_string_body_is_sent_unchanged(self):
        raw = '{ "watch_id" : "w_1" }'
        self.client.request("DELETE", "/v1/address-watch/addresses", body=raw)
        self.assertEqual(self.server.seen[0]["body"], raw.encode())

    def test_api_error_carries_status_and_error(self):
        self.server.script = [(400, {}, '{"ok":false,"error":"name: required"}')]
        with self.assertRaises(ApiError) as ctx:
            self.client.request("POST", "/v1/endpoints", body={})
        self.assertEqual((ctx.exception.status, ctx.exception.error, ctx.exception.code), (400, "name: required", "E_API"))
        self.server.script = [(502, {}, "bad gateway")]
        with self.assertRaises(ApiError) as ctx:
            self.client.account()
        self.assertEqual(ctx.exception.error, "HTTP 502: bad gateway")

    def test_retries_429_after_retry_after_then_succeeds(self):
        self.server.script = [(429, {"Retry-After": "2"}, '{"ok":false,"error":"Too many requests"}'), (200, {}, '{"ok":true,"user_id":7}')]
        self.assertEqual(self.client.request("POST", "/v1/endpoints", body={"name": "x"})["user_id"], 7)
        self.assertEqual(self.sleeps, [2])
        self.assertEqual(len(self.server.seen), 2)
        # each attempt is signed afresh
        self.assertTrue(all(verify("secret-1", s["headers"]["X-Timestamp"], "POST", s["path"], s["body"], s["headers"]["X-Signature"]) for s in self.server.seen))

    def test_gives_up_on_429_after_max_retries(self):
        self.server.script = [(429, {"Retry-After": "1"}, '{"ok":false,"error":"Too many requests"}')] * 4
        with self.assertRaises(ApiError) as ctx:
            self.client.account()
        self.assertEqual((ctx.exception.status, ctx.exception.retry_after, ctx.exception.code), (429, 1, "E_RATE_LIMIT"))
        self.assertEqual(len(self.server.seen), 4)

    def test_retries_idempotent_requests_on_connection_errors_only(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            dead = "http://127.0.0.1:%d" % s.getsockname()[1]
        sleeps = []
        client = Client("k", "s", dead, max_retries=2, sleep=sleeps.append)
        with self.assertRaises(NetworkError):
            client.list_endpoints()
        self.assertEqual(len(sleeps), 2)
        sleeps.clear()
        with self.assertRaises(NetworkError):
            client.create_endpoint("x", network_environment_id=1)
        self.assertEqual(sleeps, [])

    def test_timeout(self):
        self.server.script = [("hang", {}, "")]
        client = Client("k", "s", self.server.url, timeout=0.2, max_retries=0)
        with self.assertRaises(NetworkError):
            client.account()

    def test_reads_the_environment(self):
        env = {"PUBLIC_API_KEY": "env-key", "PUBLIC_API_SECRET": "env-secret", "PUBLIC_API_BASE": self.server.url}
        with mock.patch.dict(os.environ, env):
            client = Client()
            self.assertNotIn("env-secret", repr(client))
            client.account()
        self.assertEqual(self.server.seen[0]["headers"]["X-Api-Key"], "env-key")
        with mock.patch.dict(os.environ, {"PUBLIC_API_KEY": "", "PUBLIC_API_SECRET": ""}):
            with self.assertRaises(ConfigError):
                Client()

    def test_paging_helpers_follow_every_page(self):
        self.server.script = [
            (200, {}, json.dumps({"ok": True, "addresses": [{"watch_id": "w_1"}, {"watch_id": "w_2"}], "page": 1, "per_page": 2, "total": 3})),
            (200, {}, json.dumps({"ok": True, "addresses": [{"watch_id": "w_3"}], "page": 2, "per_page": 2, "total": 3})),
            (200, {}, json.dumps({"ok": True, "events": [{"id": "1"}, {"id": "2"}], "next_after": "2"})),
            (200, {}, json.dumps({"ok": True, "events": [], "next_after": "2"})),
        ]
        ids = [w["watch_id"] for w in self.client.address_watch.iter_addresses(per_page=2)]
        self.assertEqual(ids, ["w_1", "w_2", "w_3"])
        self.assertEqual([e["id"] for e in self.client.address_watch.iter_events(limit=2)], ["1", "2"])
        paths = [s["path"] for s in self.server.seen]
        self.assertEqual(paths[:2], ["/v1/address-watch/addresses?page=1&per_page=2", "/v1/address-watch/addresses?page=2&per_page=2"])
        self.assertEqual(paths[2:], ["/v1/address-watch/events?limit=2", "/v1/address-watch/events?after=2&limit=2"])


if __name__ == "__main__":
    unittest.main()
