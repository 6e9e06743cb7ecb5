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
PayoutStatus = Literal["awaiting_approval", "awaiting_address", "awaiting_payment", "sent", "completed", "canceled"]
Approval = Literal["not_needed", "awaiting", "approved"]
RefundAmountKind = Literal["full", "overpaid", "asset", "fiat_locked", "fiat_current"]
RefundRate = Literal["locked", "current"]


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
"""A feed item and a webhook body. Wallet hits and block events carry different fields.

``token`` is the ERC-20/TRC-20 contract, Stellar ``CODE:ISSUER`` or Solana SPL mint (null for the
native coin); ``amount`` a raw integer string in the smallest unit (wei, sat, sun, stroops,
lamports); ``tx_hash`` the transaction hash, or on Solana its signature; ``block_height`` the
block number, Stellar ledger or Solana slot.
"""


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
    """Where the customer pays: the order's own address, or on Solana the merchant's wallet."""
    reference: Optional[str]
    """Solana Pay: the public key the customer's transaction names, telling this order's payments apart; None elsewhere."""
    watch_id: str
    derivation_index: Optional[int]
    amount: str
    amount_raw: str
    amount_received: str
    amount_received_raw: str
    price_amount: Optional[str]
    """The fiat price (decimal string) of an order priced in ``price_currency``; None when priced in the asset."""
    price_currency: Optional[str]
    rate: Optional[str]
    """``price_currency`` per asset unit, locked at creation (decimal string)."""
    rate_source: Optional[Literal["static", "http"]]
    rate_at: Optional[str]
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


class Wallets(TypedDict, total=False):
    """The merchant's wallet per family whose orders share it, told apart by a Solana Pay reference."""

    solana: str


class ApprovalThreshold(TypedDict):
    amount: str
    currency: str


class PaymentSettings(TypedDict):
    ok: bool
    xpubs: Xpubs
    wallets: Wallets
    aml_fail_at: AmlFailAt
    underpaid_tolerance_bps: int
    accept_late: bool
    display_name: Optional[str]
    """The merchant's name on the checkout page."""
    redirect_url: Optional[str]
    """Where the checkout page sends a paid customer, with ``?order_id=``."""
    payouts_approval_over: Optional[ApprovalThreshold]
    """Refunds and payouts worth more need a second owner's approval; None: off."""
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


class PaymentRequest(TypedDict):
    """What the merchant's wallet is asked to pay: BIP21, EIP-681 or the plain address, and its QR code."""

    uri: str
    qr_svg: Optional[str]


class _LineFields(TypedDict):
    status: PayoutStatus
    network: str
    asset: str
    asset_symbol: str
    decimals: int
    address: Optional[str]
    """None while a refund waits for the customer's address."""
    amount: str
    amount_raw: str
    price_amount: Optional[str]
    price_currency: Optional[str]
    rate: Optional[str]
    reference: Optional[str]
    tx_hash: Optional[str]
    """The matching transfer, once one is in a block."""
    expected_tx: Optional[str]
    """A signed transaction submitted for it: only that one matches."""
    lifecycle: str
    payment_request: Optional[PaymentRequest]
    """None until approved and while there is no address, and once paid."""
    updated_at: str


class PayoutLine(_LineFields):
    line: int
    """1-based position in the payout."""


class _ApprovalFields(TypedDict):
    approval: Approval
    approval_reason: Optional[Literal["role", "amount"]]
    created_by: str
    approved_by: Optional[str]
    approved_at: Optional[str]
    fiat_total: Optional[str]
    fiat_currency: Optional[str]


class Payout(_ApprovalFields):
    """A payout; ``status`` is the least advanced of its lines that are not canceled.

    ``lines`` is empty in lists; :meth:`rpcctl.Payouts.get` returns them.
    """

    payout_id: str
    status: PayoutStatus
    lines: List[PayoutLine]
    line_count: int
    created_at: str
    updated_at: str


class RefundLink(TypedDict):
    url: Optional[str]
    """Shown once, at creation."""
    expires_at: str
    claimed: bool


class Refund(_ApprovalFields, _LineFields):
    refund_id: str
    payment_id: str
    order_id: str
    amount_kind: RefundAmountKind
    refund_link: Optional[RefundLink]
    created_at: str


class RefundResponse(TypedDict):
    ok: bool
    refund: Refund


class RefundList(TypedDict):
    ok: bool
    refunds: List[Refund]


class PayoutLineInput(TypedDict, total=False):
    network: str
    asset: str
    address: str
    amount: str
    price_amount: str
    price_currency: str
    reference: str


class PayoutResponse(TypedDict):
    ok: bool
    payout: Payout


class PayoutList(TypedDict):
    ok: bool
    payouts: List[Payout]
    page: int
    per_page: int
    total: int


class PayoutPsbt(TypedDict):
    ok: bool
    psbt: str
    """Base64 of an unsigned BIP174 PSBT."""
    fee_raw: Optional[str]


class SubmittedTransaction(PayoutResponse):
    tx_hash: str


class _LineEventFields(TypedDict):
    id: str
    """``{payout_id}_{line}_{sequence}``, equal to ``X-Webhook-Id``."""
    product: Literal["payments"]
    status: PayoutStatus
    network: str
    asset: str
    asset_symbol: str
    address: Optional[str]
    amount: str
    amount_raw: str
    reference: Optional[str]
    tx_hash: Optional[str]
    block_height: Optional[int]
    lifecycle: str
    sequence: int
    created_at: str


class RefundEvent(_LineEventFields):
    """A ``refund`` webhook body (``type == "refund"``); ``event`` is ``refund.<status>``."""

    type: Literal["refund"]
    event: str
    refund_id: str
    payment_id: Optional[str]
    order_id: Optional[str]


class PayoutLineEvent(_LineEventFields):
    """A ``payout_line`` webhook body (``type == "payout_line"``); ``event`` is ``payout.<status>``."""

    type: Literal["payout_line"]
    event: str
    payout_id: str
    line: int
