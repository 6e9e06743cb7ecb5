"""Shapes of the Public API's answers, for type checkers. At run time they are plain dicts."""
from typing import Any, Dict, List, Optional

try:
    from typing import Literal, TypedDict
except ImportError:  # pragma: no cover - Python < 3.8
    from typing_extensions import Literal, TypedDict  # type: ignore

EndpointStatus = Literal["active", "paused"]
WatchEventType = Literal["payment", "payout", "other", "block"]
DeliveryStatus = Literal["pending", "delivered", "failed", "cancelled"]
PaymentStatus = Literal["pending", "seen", "aml_check", "paid", "failed", "underpaid", "expired"]
PaymentEventName = Literal["seen", "aml_check", "paid", "failed", "underpaid", "expired"]
RiskLevel = Literal["low", "medium", "high", "severe", "unknown"]
AmlFailAt = Literal["medium", "high", "severe"]


class Plan(TypedDict):
    id: int
    slug: str
    name: str
    included_credits: int
    rps_limit: int
    endpoints_limit: int
    webhook_address_slots: int


class AccountUsageSummary(TypedDict):
    period: str
    requests: int
    credits_used: int
    credits_included: int
    credits_remaining: int


class Account(TypedDict):
    ok: bool
    user_id: int
    plan: Optional[Plan]
    usage: AccountUsageSummary


class Endpoint(TypedDict):
    id: int
    uuid: str
    name: str
    status: EndpointStatus
    network_id: int
    network_name: str
    network_slug: str
    network_environment_id: int
    env_slug: str
    url: str
    rps_limit: int
    plan_id: int
    created_at: str
    version: Optional[str]
    block_height: Optional[int]
    allowed_ips: List[str]


class EndpointResponse(TypedDict):
    ok: bool
    endpoint: Endpoint


class EndpointList(TypedDict):
    ok: bool
    endpoints: List[Endpoint]


class AvailableNetwork(TypedDict):
    id: int
    uuid: str
    name: str
    slug: str
    sort: int
    environment_kinds: List[str]


class AvailableNetworks(TypedDict):
    ok: bool
    networks: List[AvailableNetwork]
    network_limit: Optional[int]
    allowed_network_slugs: List[str]


class UsagePoint(TypedDict):
    date: str
    requests: int
    credits: int


class MethodUsage(TypedDict):
    method: str
    requests: int
    credits: int


class Usage(TypedDict):
    days: int
    total_requests: int
    total_credits: int
    series: List[UsagePoint]
    methods: List[MethodUsage]


class UsageResponse(TypedDict):
    ok: bool
    usage: Usage


class WatchedAddress(TypedDict):
    watch_id: str
    network_slug: str
    address: str
    created_at: str


class AddedWatch(WatchedAddress):
    ok: bool
    watch: WatchedAddress
    created: bool


class WatchList(TypedDict):
    ok: bool
    addresses: List[WatchedAddress]
    page: int
    per_page: int
    total: int


class WatchAccount(TypedDict):
    ok: bool
    slots_total: int
    slots_used: int
    slots_free: int
    webhook_configured: bool
    webhook_enabled: bool


# Functional form: a wallet hit has a field named ``from``, a Python keyword.
WatchEvent = TypedDict(
    "WatchEvent",
    {
        "id": str,
        "type": WatchEventType,
        "network": str,
        "block_height": int,
        "block_hash": str,
        "created_at": str,
        "watch_id": str,
        "address": str,
        "tx_hash": str,
        "direction": Literal["in", "out"],
        "from": Optional[str],
        "to": Optional[str],
        "token": Optional[str],
        "amount": str,
        "log_index": Optional[int],
        "tx_count": int,
        "transactions": List[str],
        "test": bool,
    },
    total=False,
)
"""A feed item and a webhook body. Wallet hits and block events carry different fields."""


class EventPage(TypedDict):
    ok: bool
    events: List[WatchEvent]
    next_after: Optional[str]
    retention_days: Optional[int]


class WebhookEventFilters(TypedDict, total=False):
    payment: bool
    payment_networks: List[str]
    payout: bool
    payout_networks: List[str]
    block: bool
    block_networks: List[str]


class WebhookSettings(TypedDict):
    ok: bool
    url: Optional[str]
    enabled: bool
    events: WebhookEventFilters
    egress_ips: List[str]


class QueuedTest(TypedDict):
    ok: bool
    queued: bool
    webhook_id: str
    body: str


class WebhookAttempt(TypedDict):
    attempt: int
    started_at: str
    status_code: Optional[int]
    duration_ms: int
    error: Optional[str]
    next_retry_at: Optional[str]
    response_excerpt: Optional[str]
    """The first bytes of the receiver's answer, for debugging a failing receiver."""


class WebhookDelivery(TypedDict):
    delivery_id: str
    webhook_id: str
    event_id: Optional[str]
    type: str
    network: str
    test: bool
    status: DeliveryStatus
    attempt_count: int
    next_retry_at: Optional[str]
    last_status_code: Optional[int]
    last_error: Optional[str]
    created_at: str
    delivered_at: Optional[str]
    attempts: List[WebhookAttempt]


class DeliveryPage(TypedDict):
    ok: bool
    deliveries: List[WebhookDelivery]
    next_before: Optional[str]
    retention_days: Optional[int]


class DeliveryResponse(TypedDict):
    ok: bool
    delivery: WebhookDelivery


class AmlDetail(TypedDict):
    category: str
    address: str
    source: str


class AmlResult(TypedDict):
    """A screening result: the worst sender decides ``risk_level``; ``details`` lists them all."""

    provider: str
    score: int
    risk_level: RiskLevel
    details: List[AmlDetail]
    report_url: Optional[str]
    checked_at: str


class Payment(TypedDict):
    """A payment order. Amounts are decimal strings in units; ``*_raw`` are integer base units."""

    payment_id: str
    order_id: str
    status: PaymentStatus
    network: str
    asset: str
    asset_symbol: str
    decimals: int
    address: str
    watch_id: str
    derivation_index: Optional[int]
    amount: str
    amount_raw: str
    amount_received: str
    amount_received_raw: str
    tx_hashes: List[str]
    confirmations: int
    expires_at: str
    created_at: str
    updated_at: str
    webhook_url: Optional[str]
    metadata: Optional[Dict[str, Any]]
    aml: Optional[AmlResult]
    reason: Optional[str]
    late: bool
    overpaid: bool
    lifecycle: str
    """Every status taken, joined by ``>``: ``pending>seen>aml_check>paid``."""
    checkout_url: str
    """The hosted checkout page to send the customer to; the payment id in it is its only credential."""


class PaymentResponse(TypedDict):
    ok: bool
    payment: Payment


class CreatedPayment(TypedDict):
    ok: bool
    payment: Payment
    created: bool


class PaymentList(TypedDict):
    ok: bool
    payments: List[Payment]
    page: int
    per_page: int
    total: int


class Xpubs(TypedDict, total=False):
    evm: str
    utxo: str
    tron: str


class DerivedAddress(TypedDict):
    first_address: str
    next_index: int


class DerivedUtxoAddress(DerivedAddress):
    network: str


class Derived(TypedDict, total=False):
    evm: DerivedAddress
    utxo: DerivedUtxoAddress
    tron: DerivedAddress


class PaymentSettings(TypedDict):
    ok: bool
    xpubs: Xpubs
    aml_fail_at: AmlFailAt
    underpaid_tolerance_bps: int
    accept_late: bool
    display_name: Optional[str]
    """The merchant's name on the checkout page."""
    redirect_url: Optional[str]
    """Where the checkout page sends a paid customer, with ``?order_id=``."""
    derived: Derived


class PaymentOrderEvent(TypedDict):
    """A ``payment_order`` webhook body (``type == "payment_order"``); ``status`` equals ``event``."""

    id: str
    product: Literal["payments"]
    type: Literal["payment_order"]
    event: PaymentEventName
    status: PaymentEventName
    payment_id: str
    order_id: str
    watch_id: str
    network: str
    address: str
    amount: str
    amount_raw: str
    tx_hash: Optional[str]
    lifecycle: str
    aml: Optional[AmlResult]
    reason: Optional[str]
    late: bool
    overpaid: bool
    asset: str
    asset_symbol: str
    amount_received: str
    amount_received_raw: str
    expires_at: str
    metadata: Optional[Dict[str, Any]]
    sequence: int
    created_at: str
