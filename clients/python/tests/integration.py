"""Integration run against a real `rpcctl serve` (started by the repository's vitest harness).

Reads PUBLIC_API_KEY, PUBLIC_API_SECRET, PUBLIC_API_BASE and RPCCTL_WEBHOOK_SECRET; prints one
JSON line describing what it did, for the harness to check against the service.
"""
import http.server
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from rpcctl import ApiError, Client, WebhookVerificationError, construct_event  # noqa: E402

ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"
secret = os.environ["RPCCTL_WEBHOOK_SECRET"]
received = []
arrived = threading.Condition()


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            event = construct_event(body, self.headers, secret)
        except WebhookVerificationError as err:
            self.send_response(400)
            self.end_headers()
            self.wfile.write(str(err).encode())
            return
        try:
            construct_event(body, self.headers, "whsec_wrong")
            wrong_secret_refused = False
        except WebhookVerificationError:
            wrong_secret_refused = True
        self.send_response(200)
        self.end_headers()
        with arrived:
            received.append({"webhook_id": self.headers.get("X-Webhook-Id"), "event": event, "wrong_secret_refused": wrong_secret_refused})
            arrived.notify_all()

    def log_message(self, *args):
        pass


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def main():
    client = Client()
    account = client.account()
    check(account["ok"] and account["plan"]["slug"] == "pro", "account: %r" % account)

    created = client.create_endpoint("python-it", network_id=1, env_slug="mainnet")["endpoint"]
    ids = [e["id"] for e in client.list_endpoints()["endpoints"]]
    check(created["id"] in ids, "listed endpoints %r lack %r" % (ids, created["id"]))
    allowed = client.set_allowed_ips(created["id"], ["203.0.113.7", "2001:db8::1"])["endpoint"]["allowed_ips"]
    check(allowed == ["203.0.113.7", "2001:db8::1"], "allowed_ips %r" % allowed)
    paused = client.set_endpoint_status(created["id"], "paused")["endpoint"]
    check(paused["status"] == "paused", "status %r" % paused["status"])
    check(client.get_endpoint(created["id"])["endpoint"]["allowed_ips"] == allowed, "get_endpoint")
    try:
        client.set_allowed_ips(created["id"], ["not-an-ip"])
        raise AssertionError("a bad IP was accepted")
    except ApiError as err:
        bad_request = {"status": err.status, "error": err.error}

    watch = client.address_watch.add("eth", ADDRESS)
    check(watch["created"], "watch not created: %r" % watch)
    listed = [w["watch_id"] for w in client.address_watch.iter_addresses(network_slug="eth")]
    check(watch["watch_id"] in listed, "watch %r not in %r" % (watch["watch_id"], listed))

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/hooks" % server.server_address[1]
    client.address_watch.set_webhook(url, True)
    queued = client.address_watch.test_webhook("payment", "eth")
    deadline = time.time() + 20
    with arrived:
        while not any(r["webhook_id"] == queued["webhook_id"] for r in received):
            left = deadline - time.time()
            check(left > 0, "no verified delivery of %s within 20 s" % queued["webhook_id"])
            arrived.wait(left)
    server.shutdown()
    got = next(r for r in received if r["webhook_id"] == queued["webhook_id"])
    print(json.dumps({
        "endpoint_id": created["id"],
        "allowed_ips": allowed,
        "bad_request": bad_request,
        "watch_id": watch["watch_id"],
        "webhook_id": queued["webhook_id"],
        "event": got["event"],
        "wrong_secret_refused": got["wrong_secret_refused"],
    }))


if __name__ == "__main__":
    main()
