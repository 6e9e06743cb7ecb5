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
