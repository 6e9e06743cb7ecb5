"""Official Python client of the rpcctl Public API.

>>> from rpcctl import Client
>>> client = Client()  # PUBLIC_API_KEY, PUBLIC_API_SECRET, PUBLIC_API_BASE  # doctest: +SKIP
"""
from .client import DEFAULT_BASE_URL, AddressWatch, Client, Payments, Payouts, Refunds
from .errors import ApiError, ConfigError, NetworkError, RpcctlError, WebhookVerificationError
from .signing import canonical_string, safe_equal, sha256_hex, sign, signature_headers, signed_path, verify
from .webhooks import DEFAULT_TOLERANCE_SECONDS, construct_event, sign_webhook, verify_webhook

__version__ = "0.1.0"

__all__ = [
    "AddressWatch",
    "ApiError",
    "Client",
    "ConfigError",
    "DEFAULT_BASE_URL",
    "DEFAULT_TOLERANCE_SECONDS",
    "NetworkError",
    "Payments",
    "Payouts",
    "Refunds",
    "RpcctlError",
    "WebhookVerificationError",
    "canonical_string",
    "construct_event",
    "safe_equal",
    "sha256_hex",
    "sign",
    "sign_webhook",
    "signature_headers",
    "signed_path",
    "verify",
    "verify_webhook",
]
