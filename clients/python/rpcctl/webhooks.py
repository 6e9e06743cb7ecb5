"""Verification of the service's outbound webhooks.

Each delivery carries ``X-Timestamp`` (Unix seconds) and ``X-Signature``: lowercase hex
HMAC-SHA256 over ``"{X-Timestamp}.{raw body}"``, keyed with the account's webhook secret.
"""
import hashlib
import hmac
import json
import re
import time
from typing import Any, Dict, Mapping, Optional, Union

from .errors import WebhookVerificationError
from .signing import Body, _bytes

DEFAULT_TOLERANCE_SECONDS = 300
_DIGITS = re.compile(r"^[0-9]+$")


def sign_webhook(secret: str, timestamp: Union[int, str], body: Body) -> str:
    """The ``X-Signature`` the service sends for this timestamp and body."""
    message = str(timestamp).encode("utf-8") + b"." + _bytes(body)
    return hmac.new(_bytes(secret), message, hashlib.sha256).hexdigest()


def verify_webhook(
    secret: str,
    timestamp: Optional[Union[int, str]],
    signature: Optional[str],
    body: Body,
    tolerance: int = DEFAULT_TOLERANCE_SECONDS,
    now: Optional[int] = None,
) -> None:
    """Raise :class:`WebhookVerificationError` unless the delivery is authentic and fresh.

    ``body`` is the raw request body, before any JSON parsing. ``tolerance`` is the largest
    accepted distance (seconds) between ``timestamp`` and now; 0 disables the check.
    """
    if not signature:
        raise WebhookVerificationError("missing X-Signature")
    if timestamp is None or not _DIGITS.match(str(timestamp)):
        raise WebhookVerificationError("missing or invalid X-Timestamp")
    if tolerance > 0:
        current = int(time.time()) if now is None else now
        if abs(current - int(timestamp)) > tolerance:
            raise WebhookVerificationError("timestamp outside tolerance")
    expected = sign_webhook(secret, timestamp, body)
    if not hmac.compare_digest(expected.encode("utf-8"), signature.strip().lower().encode("utf-8")):
        raise WebhookVerificationError("signature mismatch")


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    lower = name.lower()
    for key, value in headers.items():
        if key.lower() == lower:
            return value
    return None


def construct_event(
    body: Body,
    headers: Mapping[str, str],
    secret: str,
    tolerance: int = DEFAULT_TOLERANCE_SECONDS,
    now: Optional[int] = None,
) -> Dict[str, Any]:
    """Verify a delivery and return its parsed JSON body (a flat event object).

    ``event["type"]`` says which: ``payment``/``payout``/``block`` (Address Watch, see
    :class:`rpcctl.types.WatchEvent`), ``payment_order`` (:class:`rpcctl.types.PaymentOrderEvent`),
    ``refund`` (:class:`rpcctl.types.RefundEvent`) or ``payout_line``
    (:class:`rpcctl.types.PayoutLineEvent`).

    ``headers`` is any mapping of the request headers; names are matched case-insensitively.
    """
    verify_webhook(secret, _header(headers, "X-Timestamp"), _header(headers, "X-Signature"), body, tolerance, now)
    try:
        event = json.loads(_bytes(body).decode("utf-8"))
    except ValueError as err:
        raise WebhookVerificationError("body is not JSON: %s" % err) from None
    if not isinstance(event, dict):
        raise WebhookVerificationError("body is not a JSON object")
    return event
