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
SOLANA_ADDRESS = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
PAYOUT_ADDRESS = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
# BIP32 test vector 1's master public key: a public key anyone may use, derivation only.
XPUB = "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8"
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


def wait_for(what, matches, seconds=20):
    """The first received delivery for which ``matches`` is true, waiting up to ``seconds``."""
    deadline = time.time() + seconds
    with arrived:
        while True:
            found = [r for r in received if matches(r)]
            if found:
                return found
            left = deadline - time.time()
            check(left > 0, "no verified delivery of %s within %d s" % (what, seconds))
            arrived.wait(left)


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
    renamed = client.rename_endpoint(created["id"], "python-it-renamed")["endpoint"]
    check(renamed["name"] == "python-it-renamed" and renamed["status"] == "paused", "renamed %r" % renamed)
    check(client.get_endpoint(created["id"])["endpoint"]["allowed_ips"] == allowed, "get_endpoint")
    try:
        client.set_allowed_ips(created["id"], ["not-an-ip"])
        raise AssertionError("a bad IP was accepted")
    except ApiError as err:
        bad_request = {"status": err.status, "error": err.error, "code": err.code}
    try:
        client.get_endpoint(999999999)
        raise AssertionError("an unknown endpoint was found")
    except ApiError as err:
        not_found = {"status": err.status, "code": err.code}

    watch = client.address_watch.add("eth", ADDRESS)
    check(watch["created"], "watch not created: %r" % watch)
    listed = [w["watch_id"] for w in client.address_watch.iter_addresses(network_slug="eth")]
    check(watch["watch_id"] in listed, "watch %r not in %r" % (watch["watch_id"], listed))
    solana_watch = client.address_watch.add("solana", SOLANA_ADDRESS)
    check(solana_watch["address"] == SOLANA_ADDRESS, "solana address changed: %r" % solana_watch)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/hooks" % server.server_address[1]
    client.address_watch.set_webhook(url, True)
    queued = client.address_watch.test_webhook("payment", "eth")
    got = wait_for(queued["webhook_id"], lambda r: r["webhook_id"] == queued["webhook_id"])[0]

    # Payment orders: an xpub, an order (made twice: the same request again within its second
    # must be re-signed, and answers the same order), found by get and by the paging helper,
    # then canceled (twice, likewise), which sends a payment_order webhook to the receiver.
    settings = client.payments.set_settings(evm_xpub=XPUB, display_name="Python Shop")
    check(settings["xpubs"].get("evm") == XPUB and settings["display_name"] == "Python Shop", "settings %r" % settings)
    first_address = settings["derived"]["evm"]["first_address"]
    order = dict(order_id="python-it-1", network_slug="eth", amount="0.25", metadata={"lang": "python"})
    payment = client.payments.create(**order)
    check(payment["created"] and payment["payment"]["status"] == "pending", "create %r" % payment)
    pid = payment["payment"]["payment_id"]
    check(payment["payment"]["checkout_url"].endswith("/pay/" + pid), "checkout_url %r" % payment["payment"])
    again = client.payments.create(**order)
    check(not again["created"] and again["payment"]["payment_id"] == pid, "create again %r" % again)
    check(client.payments.get(pid)["payment"]["address"] == first_address, "get: not the first derived address")
    listed_payments = [p["payment_id"] for p in client.payments.iter_payments(status="pending", per_page=1)]
    check(listed_payments == [pid], "iter_payments %r" % listed_payments)
    canceled = client.payments.cancel(pid)["payment"]
    check(canceled["status"] == "failed" and canceled["reason"] == "canceled", "cancel %r" % canceled)
    check(client.payments.cancel(pid)["payment"]["status"] == "failed", "cancel again")
    try:
        client.payments.create(order_id="python-it-1", network_slug="eth", amount="1")
        raise AssertionError("another body with a used order_id was accepted")
    except ApiError as err:
        check(err.status == 409, "conflict %r" % err)
    # A fiat price reaches the service as price_amount + price_currency: this serve has no
    # rate for ETH/USD, so it refuses with the contract's message (and makes no order).
    try:
        client.payments.create(order_id="python-it-fiat", network_slug="eth", price_amount="19.99", price_currency="USD")
        raise AssertionError("a fiat order without a rate was accepted")
    except ApiError as err:
        check(err.status == 400 and err.error == "Rate unavailable for ETH/USD.", "fiat %r" % err)
    hook = wait_for("the payment_order webhook", lambda r: r["event"].get("payment_id") == pid)[0]

    # Refunds: the canceled order received nothing, so the service refuses one (409), and lists none.
    try:
        client.refunds.create(pid, address=PAYOUT_ADDRESS)
        raise AssertionError("a refund of an order that received nothing was accepted")
    except ApiError as err:
        refund_refused = {"status": err.status, "code": err.code, "error": err.error}
    check(client.refunds.list(pid)["refunds"] == [], "refunds of the canceled order")
    # A payout of one line: awaiting payment (an owner's key, no threshold), listed, read back,
    # then canceled; each of the two states sends a payout_line webhook, the cancel's is awaited.
    made = client.payouts.create([{"network": "eth", "address": PAYOUT_ADDRESS, "amount": "0.001", "reference": "python-it-payout"}])["payout"]
    check(made["status"] == "awaiting_payment" and made["line_count"] == 1, "payout %r" % made)
    po = made["payout_id"]
    listed_payouts = [p["payout_id"] for p in client.payouts.iter_payouts(status="awaiting_payment")]
    awaiting = client.payouts.list(status="awaiting_payment", page=1, per_page=1)
    check(po in listed_payouts and awaiting["payouts"][0]["payout_id"] == po, "payouts %r" % listed_payouts)
    line = client.payouts.get(po)["payout"]["lines"][0]
    # The URI is EIP-681 when the node tells the chain id; this service's node is away: the address alone.
    check(line["payment_request"] is not None and PAYOUT_ADDRESS in line["payment_request"]["uri"], "line %r" % line)
    payout_canceled = client.payouts.cancel(po)["payout"]
    check(payout_canceled["status"] == "canceled", "payout cancel %r" % payout_canceled)
    awaiting_after = client.payouts.list(status="awaiting_payment")
    payout_hook = wait_for("the payout_line webhook", lambda r: r["event"].get("payout_id") == po and r["event"].get("event") == "payout.canceled")[0]

    # Solana: the merchant's one wallet is a setting; a Solana order is paid to it and told
    # apart by its own Solana Pay reference.
    check(client.payments.set_settings(solana_wallet=SOLANA_ADDRESS)["wallets"].get("solana") == SOLANA_ADDRESS, "wallets.solana not set")
    wallet = client.payments.settings()["wallets"]["solana"]
    sol = client.payments.create(order_id="python-it-sol", network_slug="solana", amount="0.5")["payment"]
    check(sol["address"] == wallet and sol["reference"] and sol["reference"] != wallet, "solana order %r" % sol)

    # Redeliver the test webhook once the service has recorded its first delivery.
    deadline = time.time() + 20
    while True:
        delivery = next(d for d in client.address_watch.iter_deliveries() if d["webhook_id"] == queued["webhook_id"])
        if delivery["status"] == "delivered":
            break
        check(time.time() < deadline, "delivery %r not recorded as delivered" % delivery)
        time.sleep(0.1)
    redelivered = client.address_watch.redeliver(delivery["delivery_id"])["delivery"]
    check(redelivered["delivery_id"] == delivery["delivery_id"], "redeliver %r" % redelivered)
    arrivals = len(wait_for("the redelivery", lambda r: r["webhook_id"] == queued["webhook_id"] and r is not got))
    server.shutdown()
    print(json.dumps({
        "endpoint_id": created["id"],
        "renamed": renamed["name"],
        "allowed_ips": allowed,
        "bad_request": bad_request,
        "not_found": not_found,
        "watch_id": watch["watch_id"],
        "solana_watch_id": solana_watch["watch_id"],
        "webhook_id": queued["webhook_id"],
        "event": got["event"],
        "wrong_secret_refused": got["wrong_secret_refused"],
        "payment": {"payment_id": pid, "order_id": order["order_id"], "address": first_address, "created_again": again["created"]},
        "payment_event": hook["event"],
        "refund_refused": refund_refused,
        "payout": {
            "payout_id": po, "listed": po in listed_payouts, "status": payout_canceled["status"],
            "awaiting_total": [awaiting["total"], awaiting_after["total"]],
        },
        "payout_event": payout_hook["event"],
        "solana": {"wallet": wallet, "payment_id": sol["payment_id"], "reference": sol["reference"]},
        "redelivered": {"delivery_id": delivery["delivery_id"], "webhook_id": queued["webhook_id"], "arrivals": arrivals + 1},
    }))


if __name__ == "__main__":
    main()
