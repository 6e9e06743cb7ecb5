"""The signed Public API client."""
import http.client
import json
import os
import random
import socket
import threading
import time
import urllib.error
import urllib.request
from email.utils import parsedate_to_datetime
from decimal import Decimal
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Set, Union, cast
from urllib.parse import quote, urlencode, urlsplit

from . import types as t
from .errors import ApiError, ConfigError, NetworkError
from .signing import signature_headers

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
_IDEMPOTENT = frozenset(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"])
# The service accepts a signature of any other method once (a replay guard): the same request
# again within its second needs the next second's signature.
_REPLAYABLE = frozenset(["GET", "HEAD", "OPTIONS"])

Query = Mapping[str, Union[str, int, bool, None]]


def _env(name: str) -> Optional[str]:
    value = os.environ.get(name)
    return value if value else None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # A redirect would resend the signed request elsewhere; report the 3xx instead.
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


class Client:
    """A client of the rpcctl Public API that signs every request.

    Arguments left out come from the environment: ``PUBLIC_API_KEY``, ``PUBLIC_API_SECRET``
    and ``PUBLIC_API_BASE`` (default ``http://127.0.0.1:8080``).

    A 429 is retried after its ``Retry-After`` (up to ``max_retry_after`` seconds); idempotent
    requests (GET, PUT, DELETE) are also retried on connection errors. Both at most
    ``max_retries`` times. ``timeout`` (seconds) bounds each attempt.

    The service takes each signature of a mutating request once. The client repeats an
    identical request (a retry, or your code sending the same body again) with the next
    second's signature, waiting for that second, and re-signs once more when the service
    answers ``401 Invalid signature.`` with ``X-Rpcctl-Reason: replayed`` because another
    process sent those bytes in that second.
    A client is safe to share between threads.

    >>> client = Client()
    >>> client.account()["plan"]["slug"]  # doctest: +SKIP
    'pro'
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        secret: Optional[str] = None,
        base_url: Optional[str] = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        max_retry_after: float = 30.0,
        user_agent: str = "rpcctl-python/0.1.0",
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.api_key = api_key or _env("PUBLIC_API_KEY") or ""
        self._secret = secret or _env("PUBLIC_API_SECRET") or ""
        self.base_url = (base_url or _env("PUBLIC_API_BASE") or DEFAULT_BASE_URL).rstrip("/")
        if not self.api_key:
            raise ConfigError("API key is required: pass api_key or set PUBLIC_API_KEY")
        if not self._secret:
            raise ConfigError("API secret is required: pass secret or set PUBLIC_API_SECRET")
        if urlsplit(self.base_url).scheme not in ("http", "https"):
            raise ConfigError("base URL must be http(s)://...: %r" % self.base_url)
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_after = max_retry_after
        self.user_agent = user_agent
        self._sleep = sleep
        self._clock = clock
        self._opener = urllib.request.build_opener(_NoRedirect)
        self._sent_lock = threading.Lock()
        self._sent_second = 0
        self._sent: Set[str] = set()
        self.address_watch = AddressWatch(self)
        self.payments = Payments(self)
        self.refunds = Refunds(self)
        self.payouts = Payouts(self)

    def __repr__(self) -> str:  # never show the secret
        return "Client(base_url=%r, api_key=%r)" % (self.base_url, self.api_key)

    def request(self, method: str, path: str, *, query: Optional[Query] = None, body: Any = None) -> Dict[str, Any]:
        """Send any signed request; return the parsed JSON body of a 2xx answer.

        ``body`` may be a ``str``/``bytes`` (sent and signed exactly as given) or any
        JSON-serialisable value (serialised once; those bytes are signed and sent).
        Raises :class:`ApiError` for any other status, :class:`NetworkError` without an answer.
        """
        status, headers, text = self._send(method, path, query, body)
        parsed = _parse_json(text)
        if 200 <= status < 300:
            return cast(Dict[str, Any], parsed if isinstance(parsed, dict) else {})
        error = parsed.get("error") if isinstance(parsed, dict) else None
        message = error if isinstance(error, str) else ("HTTP %d%s" % (status, ": " + text[:200] if text else ""))
        raise ApiError(status, message, parsed if parsed is not None else text, _retry_after(headers.get("retry-after")), headers.get("x-rpcctl-reason"))

    def _send(self, method: str, path: str, query: Optional[Query], body: Any):  # type: ignore[no-untyped-def]
        method = method.upper()
        if body is None:
            data = b""
        elif isinstance(body, bytes):
            data = body
        elif isinstance(body, str):
            data = body.encode("utf-8")
        else:
            data = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        if not path.startswith("/"):
            path = "/" + path
        url = self.base_url + path
        pairs = [(k, _query_value(v)) for k, v in (query or {}).items() if v is not None]
        if pairs:
            url += ("&" if "?" in url else "?") + urlencode(pairs)
        signed_path = urlsplit(url).path

        attempt = 0
        resigned = False
        while True:
            headers = self._sign(method, signed_path, data)
            headers["Accept"] = "application/json"
            headers["User-Agent"] = self.user_agent
            if data:
                headers["Content-Type"] = "application/json"
            req = urllib.request.Request(url, data=data if data else None, method=method, headers=headers)
            try:
                with self._opener.open(req, timeout=self.timeout) as res:
                    status, res_headers, text = res.status, _lower(res.headers), res.read().decode("utf-8", "replace")
            except urllib.error.HTTPError as err:
                status, res_headers = err.code, _lower(err.headers)
                text = err.read().decode("utf-8", "replace")
                err.close()
            except (urllib.error.URLError, http.client.HTTPException, socket.timeout, OSError) as err:
                reason = getattr(err, "reason", err)
                if method in _IDEMPOTENT and attempt < self.max_retries:
                    self._sleep(_backoff(attempt))
                    attempt += 1
                    continue
                raise NetworkError("cannot reach %s: %s" % (self.base_url, reason)) from err
            if status == 401 and method not in _REPLAYABLE and not resigned and res_headers.get("x-rpcctl-reason") == "replayed":
                # Another process may have sent these very bytes in this second (a wrong signature says bad_signature).
                resigned = True
                self._sleep(_to_next_second(self._clock()))
                continue
            if status == 429 and attempt < self.max_retries:
                wait = _retry_after(res_headers.get("retry-after"))
                wait = 1 if wait is None else wait
                if wait <= self.max_retry_after:
                    self._sleep(wait)
                    attempt += 1
                    continue
            return status, res_headers, text

    def _sign(self, method: str, path: str, data: bytes) -> Dict[str, str]:
        now = self._clock()
        headers = signature_headers(self.api_key, self._secret, method, path, data, timestamp=int(now))
        if method not in _REPLAYABLE and self._sent_this_second(headers["X-Signature"], now):
            self._sleep(_to_next_second(now))
            now = self._clock()
            headers = signature_headers(self.api_key, self._secret, method, path, data, timestamp=int(now))
            self._sent_this_second(headers["X-Signature"], now)
        return headers

    def _sent_this_second(self, signature: str, now: float) -> bool:
        """Records a mutating signature; True when it was already sent in this second."""
        second = int(now)
        with self._sent_lock:
            if second != self._sent_second:
                self._sent_second = second
                self._sent.clear()
            if signature in self._sent:
                return True
            self._sent.add(signature)
            return False

    # Account

    def account(self) -> t.Account:
        """``GET /v1/account``: the plan and this month's usage."""
        return cast(t.Account, self.request("GET", "/v1/account"))

    def account_usage(self, days: Optional[int] = None) -> t.UsageResponse:
        """``GET /v1/account/usage``: daily usage over all endpoints (``days``: 7, 30 or 90)."""
        return cast(t.UsageResponse, self.request("GET", "/v1/account/usage", query={"days": days}))

    # Endpoints

    def list_endpoints(self) -> t.EndpointList:
        """``GET /v1/endpoints``."""
        return cast(t.EndpointList, self.request("GET", "/v1/endpoints"))

    def available_networks(self) -> t.AvailableNetworks:
        """``GET /v1/endpoints/available-networks``: what the plan can create endpoints on."""
        return cast(t.AvailableNetworks, self.request("GET", "/v1/endpoints/available-networks"))

    def create_endpoint(
        self,
        name: str,
        *,
        network_environment_id: Optional[int] = None,
        network_id: Optional[int] = None,
        env_slug: Optional[str] = None,
    ) -> t.EndpointResponse:
        """``POST /v1/endpoints``: give ``network_environment_id``, or ``network_id`` with ``env_slug``."""
        body: Dict[str, Any] = {"name": name}
        if network_environment_id is not None:
            body["network_environment_id"] = network_environment_id
        if network_id is not None:
            body["network_id"] = network_id
        if env_slug is not None:
            body["env_slug"] = env_slug
        return cast(t.EndpointResponse, self.request("POST", "/v1/endpoints", body=body))

    def get_endpoint(self, endpoint_id: int) -> t.EndpointResponse:
        """``GET /v1/endpoints/{id}``."""
        return cast(t.EndpointResponse, self.request("GET", "/v1/endpoints/%d" % endpoint_id))

    def rename_endpoint(self, endpoint_id: int, name: str) -> t.EndpointResponse:
        """``PATCH /v1/endpoints/{id}``: a new name (names need not be unique)."""
        return cast(t.EndpointResponse, self.request("PATCH", "/v1/endpoints/%d" % endpoint_id, body={"name": name}))

    def set_endpoint_status(self, endpoint_id: int, status: t.EndpointStatus) -> t.EndpointResponse:
        """``PATCH /v1/endpoints/{id}/status``: ``"paused"`` stops its traffic, ``"active"`` resumes it."""
        return cast(t.EndpointResponse, self.request("PATCH", "/v1/endpoints/%d/status" % endpoint_id, body={"status": status}))

    def set_allowed_ips(self, endpoint_id: int, allowed_ips: List[str]) -> t.EndpointResponse:
        """``PATCH /v1/endpoints/{id}/allowed-ips``: replaces the allowlist; ``[]`` allows every IP."""
        return cast(
            t.EndpointResponse,
            self.request("PATCH", "/v1/endpoints/%d/allowed-ips" % endpoint_id, body={"allowed_ips": list(allowed_ips)}),
        )

    def endpoints_usage(self, days: Optional[int] = None) -> t.UsageResponse:
        """``GET /v1/endpoints/usage``: usage over all endpoints."""
        return cast(t.UsageResponse, self.request("GET", "/v1/endpoints/usage", query={"days": days}))

    def endpoint_usage(self, endpoint_id: int, days: Optional[int] = None) -> t.UsageResponse:
        """``GET /v1/endpoints/{id}/usage``: usage of one endpoint."""
        return cast(t.UsageResponse, self.request("GET", "/v1/endpoints/%d/usage" % endpoint_id, query={"days": days}))


class AddressWatch:
    """The Address Watch routes, as ``client.address_watch``."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def account(self) -> t.WatchAccount:
        """``GET /v1/address-watch/account``: slots and webhook flags."""
        return cast(t.WatchAccount, self._client.request("GET", "/v1/address-watch/account"))

    def list(
        self,
        *,
        network_slug: Optional[str] = None,
        address: Optional[str] = None,
        page: Optional[int] = None,
        per_page: Optional[int] = None,
    ) -> t.WatchList:
        """``GET /v1/address-watch/addresses``: one page of watched addresses."""
        query = {"network_slug": network_slug, "address": address, "page": page, "per_page": per_page}
        return cast(t.WatchList, self._client.request("GET", "/v1/address-watch/addresses", query=query))

    def iter_addresses(
        self, *, network_slug: Optional[str] = None, address: Optional[str] = None, per_page: int = 200
    ) -> Iterator[t.WatchedAddress]:
        """Every watched address, fetching page after page."""
        page = 1
        while True:
            r = self.list(network_slug=network_slug, address=address, page=page, per_page=per_page)
            for item in r["addresses"]:
                yield item
            if not r["addresses"] or page * r["per_page"] >= r["total"]:
                return
            page += 1

    def add(self, network_slug: str, address: str) -> t.AddedWatch:
        """``POST /v1/address-watch/addresses``. Idempotent: the same address returns its watch with ``created`` false.

        ``address`` in its network's form: EVM 0x, Stellar ``G...``, Bitcoin-style, Tron ``T...``,
        or a Solana public key (base58, kept as given).
        """
        body = {"network_slug": network_slug, "address": address}
        return cast(t.AddedWatch, self._client.request("POST", "/v1/address-watch/addresses", body=body))

    def remove(self, watch_id: str) -> Dict[str, Any]:
        """``DELETE /v1/address-watch/addresses`` (the ``watch_id`` body is signed)."""
        return self._client.request("DELETE", "/v1/address-watch/addresses", body={"watch_id": watch_id})

    def events(
        self,
        *,
        after: Optional[str] = None,
        limit: Optional[int] = None,
        network: Optional[str] = None,
        type: Optional[t.WatchEventType] = None,
        watch_id: Optional[str] = None,
    ) -> t.EventPage:
        """``GET /v1/address-watch/events``: oldest first; pass ``next_after`` back as ``after``.

        ``after="latest"`` returns no events and the newest id: where a follower starts.
        """
        query = {"after": after, "limit": limit, "network": network, "type": type, "watch_id": watch_id}
        return cast(t.EventPage, self._client.request("GET", "/v1/address-watch/events", query=query))

    def iter_events(
        self,
        *,
        after: Optional[str] = None,
        network: Optional[str] = None,
        type: Optional[t.WatchEventType] = None,
        watch_id: Optional[str] = None,
        limit: int = 100,
    ) -> Iterator[t.WatchEvent]:
        """Every event after ``after`` up to the end of the feed, page after page."""
        while True:
            r = self.events(after=after, limit=limit, network=network, type=type, watch_id=watch_id)
            for event in r["events"]:
                yield event
            if not r["events"] or r["next_after"] is None or r["next_after"] == after:
                return
            after = r["next_after"]

    def webhook(self) -> t.WebhookSettings:
        """``GET /v1/address-watch/webhook``: URL, switch, filters and the egress IPs to allow."""
        return cast(t.WebhookSettings, self._client.request("GET", "/v1/address-watch/webhook"))

    def set_webhook(self, url: str, enabled: bool = True, events: Optional[t.WebhookEventFilters] = None) -> t.WebhookSettings:
        """``PUT /v1/address-watch/webhook``. Filter keys given replace; ``events=None`` keeps all filters."""
        body: Dict[str, Any] = {"url": url, "enabled": enabled}
        if events is not None:
            body["events"] = events
        return cast(t.WebhookSettings, self._client.request("PUT", "/v1/address-watch/webhook", body=body))

    def test_webhook(self, type: t.WatchEventType, network: str) -> t.QueuedTest:
        """``POST /v1/address-watch/webhook/test``: queue a sample delivery (never billed)."""
        body = {"type": type, "network": network}
        return cast(t.QueuedTest, self._client.request("POST", "/v1/address-watch/webhook/test", body=body))

    def deliveries(
        self,
        *,
        limit: Optional[int] = None,
        before: Optional[str] = None,
        status: Optional[t.DeliveryStatus] = None,
        event_id: Optional[str] = None,
    ) -> t.DeliveryPage:
        """``GET /v1/address-watch/deliveries``: newest first, with every attempt."""
        query = {"limit": limit, "before": before, "status": status, "event_id": event_id}
        return cast(t.DeliveryPage, self._client.request("GET", "/v1/address-watch/deliveries", query=query))

    def iter_deliveries(
        self, *, status: Optional[t.DeliveryStatus] = None, event_id: Optional[str] = None, limit: int = 100
    ) -> Iterator[t.WebhookDelivery]:
        """Every delivery, newest first, page after page."""
        before: Optional[str] = None
        while True:
            r = self.deliveries(limit=limit, before=before, status=status, event_id=event_id)
            for delivery in r["deliveries"]:
                yield delivery
            if not r["deliveries"] or r["next_before"] is None:
                return
            before = r["next_before"]

    def redeliver(self, delivery_id: str) -> t.DeliveryResponse:
        """``POST /v1/address-watch/deliveries/{delivery_id}/redeliver``: send a delivery again now.

        Same ``X-Webhook-Id``, next attempt number; resending a delivered one is not billed
        again. A delivery being sent at this moment is refused with a 409.
        """
        path = "/v1/address-watch/deliveries/%s/redeliver" % quote(str(delivery_id), safe="")
        return cast(t.DeliveryResponse, self._client.request("POST", path))


class _Unset:
    """Marks an argument left out where ``None`` is a value (it turns a setting off)."""


_UNSET = _Unset()


class Payments:
    """The payment order routes, as ``client.payments``.

    Amounts are decimal strings (``"12.50"``) or :class:`decimal.Decimal`: a ``float`` has
    already lost precision, so it is refused before anything is sent.
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    def create(
        self,
        order_id: str,
        network_slug: str,
        amount: Optional[Union[str, Decimal, int]] = None,
        *,
        price_amount: Optional[Union[str, Decimal, int]] = None,
        price_currency: Optional[str] = None,
        asset: Optional[str] = None,
        address: Optional[str] = None,
        expires_in: Optional[int] = None,
        webhook_url: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
    ) -> t.CreatedPayment:
        """``POST /v1/payments``: an order for ``amount`` of ``asset`` (default the native coin).

        Or priced in a fiat currency: ``price_amount`` in ``price_currency`` (ISO 4217, e.g.
        ``"USD"``) instead of ``amount``; the service converts it at a rate it locks now
        (``rate``, ``rate_source``, ``rate_at`` on the payment), rounded up to the asset's
        decimals. Without a fresh rate it answers 400 ``Rate unavailable for ETH/USD.``.

        Idempotent by ``order_id``: the same arguments again return the existing order with
        ``created`` false; other arguments with a used ``order_id`` are a 409 :class:`ApiError`.
        Without ``address`` the service derives one from the xpub in :meth:`settings`.
        """
        if (amount is None) == (price_amount is None):
            raise TypeError("give amount (in the asset) or price_amount with price_currency")
        body: Dict[str, Any] = {"order_id": order_id, "network_slug": network_slug}
        if amount is not None:
            body["amount"] = _amount(amount)
        else:
            body["price_amount"] = _amount(price_amount, "price_amount")  # type: ignore[arg-type]
        for key, value in (
            ("price_currency", price_currency),
            ("asset", asset), ("address", address), ("expires_in", expires_in),
            ("webhook_url", webhook_url), ("metadata", dict(metadata) if metadata is not None else None),
        ):
            if value is not None:
                body[key] = value
        return cast(t.CreatedPayment, self._client.request("POST", "/v1/payments", body=body))

    def get(self, payment_id: str) -> t.PaymentResponse:
        """``GET /v1/payments/{payment_id}``."""
        return cast(t.PaymentResponse, self._client.request("GET", "/v1/payments/%s" % quote(payment_id, safe="")))

    def list(
        self,
        *,
        order_id: Optional[str] = None,
        status: Optional[t.PaymentStatus] = None,
        network: Optional[str] = None,
        page: Optional[int] = None,
        per_page: Optional[int] = None,
    ) -> t.PaymentList:
        """``GET /v1/payments``: one page of orders, newest first (``per_page`` 1..200, default 50)."""
        query = {"order_id": order_id, "status": status, "network": network, "page": page, "per_page": per_page}
        return cast(t.PaymentList, self._client.request("GET", "/v1/payments", query=query))

    def iter_payments(
        self,
        *,
        order_id: Optional[str] = None,
        status: Optional[t.PaymentStatus] = None,
        network: Optional[str] = None,
        per_page: int = 200,
    ) -> Iterator[t.Payment]:
        """Every order matching the filters, newest first, fetching page after page."""
        page = 1
        while True:
            r = self.list(order_id=order_id, status=status, network=network, page=page, per_page=per_page)
            for payment in r["payments"]:
                yield payment
            if not r["payments"] or page * r["per_page"] >= r["total"]:
                return
            page += 1

    def cancel(self, payment_id: str) -> t.PaymentResponse:
        """``POST /v1/payments/{payment_id}/cancel``: only a ``pending`` order (409 otherwise).

        It ends ``failed`` with reason ``canceled``; canceling it again answers the same order.
        """
        path = "/v1/payments/%s/cancel" % quote(payment_id, safe="")
        return cast(t.PaymentResponse, self._client.request("POST", path))

    def settings(self) -> t.PaymentSettings:
        """``GET /v1/payments/settings``; ``derived.evm.first_address`` shows whose wallet the xpub is."""
        return cast(t.PaymentSettings, self._client.request("GET", "/v1/payments/settings"))

    def set_settings(
        self,
        *,
        evm_xpub: Optional[str] = None,
        aml_fail_at: Optional[t.AmlFailAt] = None,
        underpaid_tolerance_bps: Optional[int] = None,
        accept_late: Optional[bool] = None,
        utxo_xpub: Optional[str] = None,
        tron_xpub: Optional[str] = None,
        display_name: Optional[str] = None,
        redirect_url: Optional[str] = None,
        solana_wallet: Optional[str] = None,
        payouts_approval_over: Union[t.ApprovalThreshold, None, _Unset] = _UNSET,
    ) -> t.PaymentSettings:
        """``PUT /v1/payments/settings``: the arguments given replace theirs, the others are kept.

        ``evm_xpub`` is an extended *public* key (``xpub...``/``tpub...``); ``""`` removes it.
        A new xpub restarts derivation at index 0. ``utxo_xpub`` is the account key of a
        Bitcoin-style wallet (``zpub``/``ypub``/``xpub``; ``vpub``/``upub``/``tpub`` on test
        networks), ``tron_xpub`` the xpub of ``m/44'/195'/0'``. ``display_name`` is the name
        on the checkout page, ``redirect_url`` the https page it sends a paid customer to (with
        ``?order_id=``); ``""`` removes either. ``solana_wallet`` is the merchant's Solana
        address (``wallets.solana``): Solana orders are paid to it, each told apart by its own
        Solana Pay ``reference``; ``""`` removes it. ``payouts_approval_over``
        (``{"amount": "1000", "currency": "USD"}``) makes refunds and payouts worth more wait
        for a second owner's approval; ``None`` turns that off.
        """
        body: Dict[str, Any] = {}
        xpubs = {k: v for k, v in (("evm", evm_xpub), ("utxo", utxo_xpub), ("tron", tron_xpub)) if v is not None}
        if xpubs:
            body["xpubs"] = xpubs
        if aml_fail_at is not None:
            body["aml_fail_at"] = aml_fail_at
        if underpaid_tolerance_bps is not None:
            body["underpaid_tolerance_bps"] = underpaid_tolerance_bps
        if accept_late is not None:
            body["accept_late"] = accept_late
        if display_name is not None:
            body["display_name"] = display_name
        if redirect_url is not None:
            body["redirect_url"] = redirect_url
        if solana_wallet is not None:
            body["wallets"] = {"solana": solana_wallet}
        if not isinstance(payouts_approval_over, _Unset):
            body["payouts_approval_over"] = payouts_approval_over
        return cast(t.PaymentSettings, self._client.request("PUT", "/v1/payments/settings", body=body))


class Refunds:
    """Refunds of payment orders, as ``client.refunds`` (docs/payments.md "Refunds and payouts").

    rpcctl prepares and tracks a refund; the merchant's own wallet pays it (the refund's
    ``payment_request.uri``, or a PSBT from :meth:`Payouts.psbt`).
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    def create(
        self,
        payment_id: str,
        *,
        amount: Optional[Union[str, Decimal, int]] = None,
        price_amount: Optional[Union[str, Decimal, int]] = None,
        rate: Optional[t.RefundRate] = None,
        address: Optional[str] = None,
        reference: Optional[str] = None,
        link_expires_in: Optional[int] = None,
    ) -> t.RefundResponse:
        """``POST /v1/payments/{payment_id}/refunds``: refund an order that received money.

        ``amount`` is ``"full"`` (the default: what it received, less earlier refunds),
        ``"overpaid"``, or a decimal in the order's asset; or ``price_amount`` in the order's
        fiat currency at ``rate`` ``"locked"`` or ``"current"``. Without ``address`` the
        answer's ``refund["refund_link"]["url"]`` is for the customer to give one (shown once).
        """
        body: Dict[str, Any] = {}
        if amount is not None:
            body["amount"] = amount if amount in ("full", "overpaid") else _amount(amount)
        if price_amount is not None:
            body["price_amount"] = _amount(price_amount, "price_amount")
        for key, value in (("rate", rate), ("address", address), ("reference", reference), ("link_expires_in", link_expires_in)):
            if value is not None:
                body[key] = value
        path = "/v1/payments/%s/refunds" % quote(payment_id, safe="")
        return cast(t.RefundResponse, self._client.request("POST", path, body=body))

    def list(self, payment_id: str) -> t.RefundList:
        """``GET /v1/payments/{payment_id}/refunds``: the order's refunds, newest first."""
        path = "/v1/payments/%s/refunds" % quote(payment_id, safe="")
        return cast(t.RefundList, self._client.request("GET", path))


class Payouts:
    """Payouts of up to 1,000 lines, as ``client.payouts``; a refund's ``rf_`` id works here too.

    A developer's payout, or one above the settings' ``payouts_approval_over``, waits for an
    owner's :meth:`approve`. The merchant's wallet pays each line's ``payment_request``, or signs
    the PSBT of :meth:`psbt` and hands it to :meth:`submit_transaction`.
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    def create(self, lines: List[t.PayoutLineInput]) -> t.PayoutResponse:
        """``POST /v1/payouts``: each line has ``network``, ``address``, ``amount`` (or
        ``price_amount`` with ``price_currency``), optional ``asset`` and ``reference``.
        Amounts are decimal strings or :class:`decimal.Decimal`, never floats."""
        body_lines = []
        for line in lines:
            entry: Dict[str, Any] = dict(line)
            for key in ("amount", "price_amount"):
                if entry.get(key) is not None:
                    entry[key] = _amount(entry[key], key)
            body_lines.append(entry)
        return cast(t.PayoutResponse, self._client.request("POST", "/v1/payouts", body={"lines": body_lines}))

    def get(self, payout_id: str) -> t.PayoutResponse:
        """``GET /v1/payouts/{payout_id}``: one payout (or refund) with its lines and payment requests."""
        return cast(t.PayoutResponse, self._client.request("GET", "/v1/payouts/%s" % quote(payout_id, safe="")))

    def list(
        self, *, status: Optional[t.PayoutStatus] = None, page: Optional[int] = None, per_page: Optional[int] = None
    ) -> t.PayoutList:
        """``GET /v1/payouts``: one page of payouts with ``status`` (any when ``None``), newest
        first, without their lines; ``total`` counts every payout with ``status``."""
        query = {"status": status, "page": page, "per_page": per_page}
        return cast(t.PayoutList, self._client.request("GET", "/v1/payouts", query=query))

    def iter_payouts(self, *, status: Optional[t.PayoutStatus] = None, per_page: int = 200) -> Iterator[t.Payout]:
        """Every payout with ``status`` (any when ``None``), newest first, fetching page after page."""
        page = 1
        while True:
            r = self.list(status=status, page=page, per_page=per_page)
            for payout in r["payouts"]:
                yield payout
            if not r["payouts"] or page * r["per_page"] >= r["total"]:
                return
            page += 1

    def approve(self, payout_id: str) -> t.PayoutResponse:
        """``POST /v1/payouts/{payout_id}/approve``: an owner other than its maker; 403 for the maker."""
        return cast(t.PayoutResponse, self._client.request("POST", "/v1/payouts/%s/approve" % quote(payout_id, safe="")))

    def cancel(self, payout_id: str) -> t.PayoutResponse:
        """``POST /v1/payouts/{payout_id}/cancel``: the lines nothing was paid to yet (409 when none is left)."""
        return cast(t.PayoutResponse, self._client.request("POST", "/v1/payouts/%s/cancel" % quote(payout_id, safe="")))

    def psbt(self, payout_id: str, fee_rate: Optional[Union[str, Decimal, int]] = None) -> t.PayoutPsbt:
        """``GET /v1/payouts/{payout_id}/psbt``: an unsigned BIP174 PSBT (base64) paying the lines
        awaiting payment, on UTXO networks; ``fee_rate`` in sat/vB. It reserves a change address."""
        query = {"fee_rate": None if fee_rate is None else _amount(fee_rate, "fee_rate")}
        return cast(t.PayoutPsbt, self._client.request("GET", "/v1/payouts/%s/psbt" % quote(payout_id, safe=""), query=query))

    def submit_transaction(self, payout_id: str, signed_transaction: str, *, broadcast: Optional[bool] = None) -> t.SubmittedTransaction:
        """``POST /v1/payouts/{payout_id}/transaction``: a signed transaction (hex, or a finalized
        PSBT in base64), checked against the lines and broadcast unless ``broadcast=False``."""
        body: Dict[str, Any] = {"signed_transaction": signed_transaction}
        if broadcast is not None:
            body["broadcast"] = broadcast
        path = "/v1/payouts/%s/transaction" % quote(payout_id, safe="")
        return cast(t.SubmittedTransaction, self._client.request("POST", path, body=body))


def _amount(value: Union[str, Decimal, int], name: str = "amount") -> str:
    if isinstance(value, bool) or isinstance(value, float):
        raise TypeError(name + " must be a decimal string such as \"12.50\" or a Decimal, not %s: a float has already lost precision" % type(value).__name__)
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def _to_next_second(now: float) -> float:
    # A few milliseconds past the boundary, so the new timestamp is surely the next second.
    return 1.0 - (now % 1.0) + 0.005


def _query_value(value: Union[str, int, bool]) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _lower(headers: Any) -> Dict[str, str]:
    return {k.lower(): v for k, v in headers.items()} if headers else {}


def _parse_json(text: str) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _retry_after(value: Optional[str]) -> Optional[int]:
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
        if seconds >= 0:
            return max(1, int(-(-seconds // 1)))
        return None
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(1, int(-(-(when - time.time()) // 1)))


def _backoff(attempt: int) -> float:
    return min(2.0, 0.2 * 2 ** attempt) * (0.8 + random.random() * 0.4)
