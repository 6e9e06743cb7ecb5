import unittest

from rpcctl import WebhookVerificationError, construct_event, sign_webhook, verify_webhook

from .vectors import load

CASES = load("webhook-signatures.json")


class WebhookVectors(unittest.TestCase):
    def test_reproduces_every_case(self):
        self.assertGreaterEqual(len(CASES), 3)
        for v in CASES:
            with self.subTest(v["name"]):
                self.assertEqual(sign_webhook(v["secret"], v["timestamp"], v["body"]), v["signature"])
                self.assertEqual(sign_webhook(v["secret"], str(v["timestamp"]), v["body"].encode("utf-8")), v["signature"])
                verify_webhook(v["secret"], str(v["timestamp"]), v["signature"], v["body"], now=v["timestamp"])

    def test_construct_event_parses_a_verified_body(self):
        v = CASES[0]
        headers = {"x-timestamp": str(v["timestamp"]), "X-SIGNATURE": v["signature"], "Content-Type": "application/json"}
        event = construct_event(v["body"].encode("utf-8"), headers, v["secret"], now=v["timestamp"] + 10)
        self.assertEqual(event["type"], "payment")
        self.assertEqual(event["direction"], "in")

    def test_construct_event_parses_refund_and_payout_line_bodies(self):
        cases = {v["name"]: v for v in CASES}
        for name, kind, event in (("refund awaiting payment", "refund", "refund.awaiting_payment"), ("payout line completed", "payout_line", "payout.completed")):
            with self.subTest(name):
                v = cases[name]
                headers = {"X-Timestamp": str(v["timestamp"]), "X-Signature": v["signature"]}
                parsed = construct_event(v["body"], headers, v["secret"], now=v["timestamp"])
                self.assertEqual((parsed["type"], parsed["event"], parsed["product"]), (kind, event, "payments"))
                with self.assertRaises(WebhookVerificationError):
                    construct_event(v["body"].replace('"status"', '"Status"'), headers, v["secret"], now=v["timestamp"])
        refund = construct_event(cases["refund awaiting payment"]["body"], {"X-Timestamp": "1767226000", "X-Signature": cases["refund awaiting payment"]["signature"]}, "whsec_refund_vector", now=1767226000)
        self.assertEqual((refund["refund_id"], refund["payment_id"], refund["order_id"], refund["tx_hash"]), ("rf_Q9xA2b3C4d5E6f7G", "pay_4fQm0v2ZJr6Lk1dC", "1042", None))
        line = construct_event(cases["payout line completed"]["body"], {"X-Timestamp": "1767226100", "X-Signature": cases["payout line completed"]["signature"]}, "whsec_payout_vector", now=1767226100)
        self.assertEqual((line["payout_id"], line["line"], line["reference"], line["block_height"]), ("po_Z1y2X3w4V5u6T7s8", 2, "invoice-77", 2800123))

    def test_refusals(self):
        v = CASES[0]
        ts = str(v["timestamp"])
        cases = {
            "signature mismatch": (v["secret"], ts, v["signature"], v["body"].replace("19000000", "19000001"), 300, v["timestamp"]),
            "missing X-Signature": (v["secret"], ts, "", v["body"], 300, v["timestamp"]),
            "missing or invalid X-Timestamp": (v["secret"], "12a", v["signature"], v["body"], 300, v["timestamp"]),
            "timestamp outside tolerance": (v["secret"], ts, v["signature"], v["body"], 300, v["timestamp"] + 301),
        }
        for reason, args in cases.items():
            with self.subTest(reason):
                with self.assertRaises(WebhookVerificationError) as ctx:
                    verify_webhook(*args)
                self.assertEqual(ctx.exception.reason, reason)
        with self.assertRaises(WebhookVerificationError):
            verify_webhook("whsec_wrong", ts, v["signature"], v["body"], now=v["timestamp"])
        # tolerance 0 disables the freshness check, never the signature check
        verify_webhook(v["secret"], ts, v["signature"], v["body"], tolerance=0, now=0)
        with self.assertRaises(WebhookVerificationError):
            construct_event(b"not json", {"X-Timestamp": ts, "X-Signature": sign_webhook(v["secret"], ts, b"not json")}, v["secret"], now=v["timestamp"])


if __name__ == "__main__":
    unittest.main()
