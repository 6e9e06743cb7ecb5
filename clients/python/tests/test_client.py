"""The client against a scripted loopback HTTP server: signing, errors, retries, timeout."""
import http.server
import json
import os
import socket
import threading
import unittest
from decimal import Decimal
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


class _FakeTime:
    """A clock that the client's sleeps move forward, so waits cost no time in the tests."""

    def __init__(self, start=1_700_000_000.25):
        self.now = start
        self.sleeps = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.server = _Server()
        self.time = _FakeTime()
        self.sleeps = self.time.sleeps
        self.client = Client("key-1", "secret-1", self.server.url + "/", sleep=self.time.sleep, clock=self.time.clock)

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
        self.assertEqual((ctx.exception.status, ctx.exception.error, ctx.exception.code), (400, "name: required", "E_VALIDATION"))
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


    def test_repeats_an_identical_mutating_request_with_the_next_seconds_signature(self):
        # The service takes a mutating signature once; the same bytes again in the same second
        # would be refused as a replay.
        self.client.payments.cancel("pay_1")
        self.client.payments.cancel("pay_1")
        self.client.payments.get("pay_1")
        self.client.payments.get("pay_1")
        first, second, get1, get2 = self.server.seen
        self.assertEqual(first["headers"]["X-Timestamp"], "1700000000")
        self.assertEqual(second["headers"]["X-Timestamp"], "1700000001")
        self.assertNotEqual(first["headers"]["X-Signature"], second["headers"]["X-Signature"])
        self.assertEqual(len(self.sleeps), 1)
        self.assertAlmostEqual(self.sleeps[0], 0.755)
        # GETs may repeat a signature: no wait.
        self.assertEqual(get1["headers"]["X-Signature"], get2["headers"]["X-Signature"])
        # Another body is another signature: no wait either.
        self.client.rename_endpoint(1, "a")
        self.client.rename_endpoint(1, "b")
        self.assertEqual(len(self.sleeps), 1)

    def test_resigns_once_when_another_process_sent_the_same_request(self):
        replayed = (401, {"X-Rpcctl-Reason": "replayed"}, '{"ok":false,"error":"Invalid signature."}')
        self.server.script = [replayed, (200, {}, '{"ok":true,"delivery":{"delivery_id":"7"}}')]
        self.assertEqual(self.client.address_watch.redeliver("7")["delivery"]["delivery_id"], "7")
        a, b = self.server.seen
        self.assertEqual(a["path"], "/v1/address-watch/deliveries/7/redeliver")
        self.assertEqual(int(b["headers"]["X-Timestamp"]), int(a["headers"]["X-Timestamp"]) + 1)
        # Only once: then the refusal surfaces, as E_REPLAYED.
        self.server.script = [replayed, replayed, replayed]
        with self.assertRaises(ApiError) as ctx:
            self.client.request("POST", "/v1/payments", body={"order_id": "x"})
        self.assertEqual((ctx.exception.status, ctx.exception.code, ctx.exception.reason), (401, "E_REPLAYED", "replayed"))
        self.assertEqual(len(self.server.seen), 4)
        # A wrong signature is the same status and message, but not a replay: not re-signed.
        self.server.script = [(401, {"X-Rpcctl-Reason": "bad_signature"}, '{"ok":false,"error":"Invalid signature."}')]
        with self.assertRaises(ApiError) as ctx:
            self.client.request("POST", "/v1/payments", body={"order_id": "y"})
        self.assertEqual((ctx.exception.code, ctx.exception.reason), ("E_AUTH", "bad_signature"))
        self.assertEqual(len(self.server.seen), 5)

    def test_error_codes_are_the_same_in_every_rpcctl_library(self):
        cases = [
            ((404, {}), "E_NOT_FOUND"), ((400, {}), "E_VALIDATION"), ((429, {}), "E_RATE_LIMIT"),
            ((401, {"X-Rpcctl-Reason": "bad_signature"}), "E_AUTH"), ((403, {"X-Rpcctl-Reason": "ip_not_allowed"}), "E_AUTH"),
            ((401, {"X-Rpcctl-Reason": "replayed"}), "E_REPLAYED"), ((409, {}), "E_API"), ((500, {}), "E_API"),
        ]
        for (status, headers), code in cases:
            self.server.script = [(status, headers, '{"ok":false,"error":"x"}')]
            client = Client("key-1", "secret-1", self.server.url, max_retries=0)
            with self.assertRaises(ApiError) as ctx:
                client.account()
            self.assertEqual(ctx.exception.code, code, (status, headers))

    def test_payment_routes(self):
        order = {"payment_id": "pay_1", "order_id": "1042", "status": "pending"}
        self.server.script = [
            (200, {}, json.dumps({"ok": True, "xpubs": {"evm": "xpub1"}, "aml_fail_at": "severe", "underpaid_tolerance_bps": 50, "accept_late": False, "derived": {}})),
            (200, {}, json.dumps({"ok": True, "payment": order, "created": True})),
            (200, {}, json.dumps({"ok": True, "payments": [order, order], "page": 1, "per_page": 2, "total": 3})),
            (200, {}, json.dumps({"ok": True, "payments": [order], "page": 2, "per_page": 2, "total": 3})),
        ]
        settings = self.client.payments.set_settings(
            evm_xpub="xpub1", aml_fail_at="severe", underpaid_tolerance_bps=50, utxo_xpub="zpub1", tron_xpub="",
            display_name="Corner Shop", redirect_url="",
        )
        self.assertEqual(settings["aml_fail_at"], "severe")
        created = self.client.payments.create("1042", "eth", Decimal("12.50"), asset="USDC", metadata={"cart": 42})
        self.assertTrue(created["created"])
        self.assertEqual(len(list(self.client.payments.iter_payments(status="pending", per_page=2))), 3)
        with self.assertRaises(TypeError):
            self.client.payments.create("1043", "eth", 12.5)  # type: ignore[arg-type]
        put, post, page1, page2 = self.server.seen
        self.assertEqual(json.loads(put["body"]), {
            "xpubs": {"evm": "xpub1", "utxo": "zpub1", "tron": ""}, "aml_fail_at": "severe", "underpaid_tolerance_bps": 50,
            "display_name": "Corner Shop", "redirect_url": "",
        })
        self.assertEqual((post["method"], post["path"]), ("POST", "/v1/payments"))
        self.assertEqual(json.loads(post["body"]), {"order_id": "1042", "network_slug": "eth", "amount": "12.50", "asset": "USDC", "metadata": {"cart": 42}})
        self.assertEqual(page1["path"], "/v1/payments?status=pending&page=1&per_page=2")
        self.assertEqual(page2["path"], "/v1/payments?status=pending&page=2&per_page=2")
        self.client.payments.cancel("pay_a/b")
        self.assertEqual(self.server.seen[-1]["path"], "/v1/payments/pay_a%2Fb/cancel")

    def test_refund_and_payout_routes(self):
        refund = {"refund_id": "rf_1", "status": "awaiting_payment"}
        payout = {"payout_id": "po_1", "status": "awaiting_payment", "lines": []}
        full_page = json.dumps({"ok": True, "payouts": [payout, payout], "page": 1, "per_page": 2, "total": 3})
        self.server.script = [
            (200, {}, json.dumps({"ok": True, "refund": refund})),
            (200, {}, json.dumps({"ok": True, "refund": refund})),
            (200, {}, json.dumps({"ok": True, "refunds": [refund]})),
            (200, {}, json.dumps({"ok": True, "payout": payout})),
            (200, {}, full_page),
            (200, {}, json.dumps({"ok": True, "payouts": [payout], "page": 2, "per_page": 2, "total": 3})),
            (200, {}, json.dumps({"ok": True, "payout": payout})),
            (200, {}, json.dumps({"ok": True, "payout": payout})),
            (200, {}, json.dumps({"ok": True, "payout": payout})),
            (200, {}, json.dumps({"ok": True, "psbt": "cHNidP8=", "fee_raw": "141"})),
            (200, {}, json.dumps({"ok": True, "payout": payout, "tx_hash": "ab"})),
            (409, {}, '{"ok":false,"error":"po_1: every line has money on the way or arrived; nothing to cancel"}'),
        ]
        self.assertEqual(self.client.refunds.create("pay_1", address="0xabc", reference="r-1")["refund"]["refund_id"], "rf_1")
        self.client.refunds.create("pay_1", amount=Decimal("0.50"), link_expires_in=3600)
        self.assertEqual(len(self.client.refunds.list("pay_1")["refunds"]), 1)
        self.client.payouts.create([{"network": "eth", "address": "0xabc", "amount": Decimal("1.25"), "reference": "inv-1"}])
        listed = [p["payout_id"] for p in self.client.payouts.iter_payouts(status="awaiting_payment", per_page=2)]
        self.assertEqual(listed, ["po_1", "po_1", "po_1"])  # the service filters; total says when to stop
        self.client.payouts.get("po_1")
        self.client.payouts.approve("po_1")
        self.client.payouts.cancel("po_1")
        self.assertEqual(self.client.payouts.psbt("po_1", fee_rate="2.5")["fee_raw"], "141")
        self.assertEqual(self.client.payouts.submit_transaction("po_1", "0200", broadcast=False)["tx_hash"], "ab")
        with self.assertRaises(ApiError) as ctx:
            self.client.payouts.cancel("po_1")
        self.assertEqual((ctx.exception.status, ctx.exception.code), (409, "E_API"))
        with self.assertRaises(TypeError):
            self.client.payouts.create([{"network": "eth", "address": "0xabc", "amount": 1.25}])  # type: ignore[list-item]
        seen = [(r["method"], r["path"], json.loads(r["body"]) if r["body"] else None) for r in self.server.seen]
        self.assertEqual(seen, [
            ("POST", "/v1/payments/pay_1/refunds", {"address": "0xabc", "reference": "r-1"}),
            ("POST", "/v1/payments/pay_1/refunds", {"amount": "0.50", "link_expires_in": 3600}),
            ("GET", "/v1/payments/pay_1/refunds", None),
            ("POST", "/v1/payouts", {"lines": [{"network": "eth", "address": "0xabc", "amount": "1.25", "reference": "inv-1"}]}),
            ("GET", "/v1/payouts?status=awaiting_payment&page=1&per_page=2", None),
            ("GET", "/v1/payouts?status=awaiting_payment&page=2&per_page=2", None),
            ("GET", "/v1/payouts/po_1", None),
            ("POST", "/v1/payouts/po_1/approve", None),
            ("POST", "/v1/payouts/po_1/cancel", None),
            ("GET", "/v1/payouts/po_1/psbt?fee_rate=2.5", None),
            ("POST", "/v1/payouts/po_1/transaction", {"signed_transaction": "0200", "broadcast": False}),
            ("POST", "/v1/payouts/po_1/cancel", None),
        ])

    def test_solana_wallet_and_approval_threshold_settings(self):
        self.server.script = [(200, {}, '{"ok":true}'), (200, {}, '{"ok":true}')]
        self.client.payments.set_settings(solana_wallet="9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", payouts_approval_over={"amount": "1000", "currency": "USD"})
        self.client.payments.set_settings(payouts_approval_over=None)
        self.assertEqual([json.loads(r["body"]) for r in self.server.seen], [
            {"wallets": {"solana": "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"}, "payouts_approval_over": {"amount": "1000", "currency": "USD"}},
            {"payouts_approval_over": None},
        ])

    def test_payment_priced_in_fiat(self):
        order = {"payment_id": "pay_2", "order_id": "1044", "price_amount": "19.99", "price_currency": "EUR", "rate": "2800", "rate_source": "http"}
        self.server.script = [(200, {}, json.dumps({"ok": True, "payment": order, "created": True}))]
        created = self.client.payments.create("1044", "eth", price_amount=Decimal("19.99"), price_currency="EUR")
        self.assertEqual(created["payment"]["rate"], "2800")
        self.assertEqual(json.loads(self.server.seen[-1]["body"]), {"order_id": "1044", "network_slug": "eth", "price_amount": "19.99", "price_currency": "EUR"})
        # Exactly one of amount and price_amount, refused before anything is sent.
        with self.assertRaises(TypeError):
            self.client.payments.create("1045", "eth", "1", price_amount="1", price_currency="EUR")
        with self.assertRaises(TypeError):
            self.client.payments.create("1045", "eth")
        with self.assertRaises(TypeError):
            self.client.payments.create("1045", "eth", price_amount=19.99, price_currency="EUR")  # type: ignore[arg-type]
        self.assertEqual(len(self.server.seen), 1)


if __name__ == "__main__":
    unittest.main()
