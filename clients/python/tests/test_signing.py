import json
import unittest

from rpcctl import canonical_string, sha256_hex, sign, signature_headers, signed_path, verify

from .vectors import load

CASES = load("signatures.json")


class SigningVectors(unittest.TestCase):
    def test_has_vectors(self):
        self.assertGreaterEqual(len(CASES), 7)

    def test_reproduces_every_case(self):
        for v in CASES:
            with self.subTest(v["name"]):
                args = (v["timestamp"], v["method"], v["request_target"], v["body"])
                self.assertEqual(sha256_hex(v["body"]), v["body_sha256"])
                self.assertEqual(canonical_string(*args), v["canonical_string"])
                self.assertEqual(sign(v["secret"], *args), v["signature"])
                self.assertEqual(sign(v["secret"], *args[:3], v["body"].encode("utf-8")), v["signature"])
                self.assertTrue(verify(v["secret"], *args, v["signature"]))

    def test_reserialised_body_does_not_verify(self):
        v = next(c for c in CASES if c["name"].startswith("Body with whitespace"))
        reserialised = json.dumps(json.loads(v["body"]), separators=(",", ":"))
        self.assertNotEqual(reserialised, v["body"])
        self.assertFalse(verify(v["secret"], v["timestamp"], v["method"], v["request_target"], reserialised, v["signature"]))

    def test_rejects_wrong_signatures(self):
        v = CASES[0]
        args = (v["timestamp"], v["method"], v["request_target"], v["body"])
        self.assertFalse(verify(v["secret"], *args, v["signature"][:-1]))
        flipped = v["signature"][:-1] + ("1" if v["signature"][-1] == "0" else "0")
        self.assertFalse(verify(v["secret"], *args, flipped))
        self.assertFalse(verify("other", *args, v["signature"]))
        self.assertEqual(sign(v["secret"], v["timestamp"], "get", v["request_target"], ""), v["signature"])

    def test_signed_path_drops_host_query_fragment(self):
        self.assertEqual(signed_path("https://api.example/v1/endpoints/usage?days=7"), "/v1/endpoints/usage")
        self.assertEqual(signed_path("/v1/account#x"), "/v1/account")

    def test_signature_headers(self):
        v = CASES[2]
        h = signature_headers("key-1", v["secret"], v["method"], v["request_target"], v["body"], timestamp=v["timestamp"])
        self.assertEqual(h, {"X-Api-Key": "key-1", "X-Timestamp": str(v["timestamp"]), "X-Signature": v["signature"]})


if __name__ == "__main__":
    unittest.main()
