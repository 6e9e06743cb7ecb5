"""Public API request signing (HMAC-SHA256 over a four-line canonical string)."""
import hashlib
import hmac
import time
from typing import Dict, Optional, Union
from urllib.parse import urlsplit

Body = Union[str, bytes]


def _bytes(value: Body) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def sha256_hex(body: Body = b"") -> str:
    """Lowercase hex SHA-256 of the body bytes (UTF-8 for a ``str``)."""
    return hashlib.sha256(_bytes(body)).hexdigest()


def signed_path(target: str) -> str:
    """The part of a request target that is signed: the path, without host, query or fragment."""
    if "://" in target:
        target = urlsplit(target).path
    for sep in ("?", "#"):
        cut = target.find(sep)
        if cut != -1:
            target = target[:cut]
    return target


def canonical_string(timestamp: Union[int, str], method: str, path: str, body: Body = b"") -> str:
    """``{timestamp}\\n{METHOD}\\n{/v1/path}\\n{sha256 hex of body}``, no trailing newline."""
    return "%s\n%s\n%s\n%s" % (timestamp, method.upper(), signed_path(path), sha256_hex(body))


def sign(secret: str, timestamp: Union[int, str], method: str, path: str, body: Body = b"") -> str:
    """Lowercase hex HMAC-SHA256 of the canonical string, keyed with the secret's UTF-8 bytes.

    ``body`` must be exactly the bytes that are sent: re-serialising JSON after signing
    breaks the signature.
    """
    message = canonical_string(timestamp, method, path, body).encode("utf-8")
    return hmac.new(_bytes(secret), message, hashlib.sha256).hexdigest()


def safe_equal(expected: str, received: str) -> bool:
    """Constant-time comparison of two signatures."""
    return hmac.compare_digest(expected.encode("utf-8"), received.encode("utf-8"))


def verify(secret: str, timestamp: Union[int, str], method: str, path: str, body: Body, signature: str) -> bool:
    """True when ``signature`` is the signature of this request."""
    return safe_equal(sign(secret, timestamp, method, path, body), signature)


def signature_headers(
    api_key: str, secret: str, method: str, path: str, body: Body = b"", timestamp: Optional[int] = None
) -> Dict[str, str]:
    """The three headers of a Public API request: ``X-Api-Key``, ``X-Timestamp``, ``X-Signature``."""
    ts = int(time.time()) if timestamp is None else int(timestamp)
    return {
        "X-Api-Key": api_key,
        "X-Timestamp": str(ts),
        "X-Signature": sign(secret, ts, method, path, body),
    }
