<?php

declare(strict_types=1);

namespace Rpcctl;

/**
 * The payment order routes, as `$client->payments`.
 *
 * Amounts are decimal strings ('12.50'): a float has already lost precision, and the service
 * refuses JSON numbers. Answers keep amounts as strings too; `*_raw` are integer base units.
 *
 * @phpstan-type AmlResult array{provider: string, score: int, risk_level: 'low'|'medium'|'high'|'severe'|'unknown', details: list<array{category: string, address: string, source: string}>, report_url: ?string, checked_at: string}
 * @phpstan-type PaymentStatus 'pending'|'seen'|'aml_check'|'paid'|'failed'|'underpaid'|'expired'
 * @phpstan-type Payment array{payment_id: string, order_id: string, status: PaymentStatus, network: string, asset: string, asset_symbol: string, decimals: int, address: string, reference: ?string, watch_id: string, derivation_index: ?int, amount: string, amount_raw: string, amount_received: string, amount_received_raw: string, price_amount: ?string, price_currency: ?string, rate: ?string, rate_source: 'static'|'http'|null, rate_at: ?string, tx_hashes: list<string>, confirmations: int, expires_at: string, created_at: string, updated_at: string, webhook_url: ?string, metadata: array<string, mixed>|null, aml: AmlResult|null, reason: ?string, late: bool, overpaid: bool, lifecycle: string, checkout_url: string}
 * @phpstan-type PaymentSettings array{ok: true, xpubs: array{evm?: string, utxo?: string, tron?: string}, aml_fail_at: 'medium'|'high'|'severe', underpaid_tolerance_bps: int, accept_late: bool, wallets: array{solana?: string}, display_name: ?string, redirect_url: ?string, payouts_approval_over: array{amount: string, currency: string}|null, derived: array{evm?: array{first_address: string, next_index: int}, utxo?: array{first_address: string, network: string, next_index: int}, tron?: array{first_address: string, next_index: int}}}
 */
final class Payments
{
    public function __construct(private readonly Client $client)
    {
    }

    /**
     * POST /v1/payments: an order for `$amount` of `$asset` (default the native coin).
     *
     * Or priced in a fiat currency: `$priceAmount` in `$priceCurrency` (ISO 4217, e.g. 'USD')
     * instead of `$amount`; the service converts it at a rate it locks now (`rate`,
     * `rate_source`, `rate_at` on the payment), rounded up to the asset's decimals. Without a
     * fresh rate it answers 400 `Rate unavailable for ETH/USD.`.
     *
     * Idempotent by `$orderId`: the same arguments again return the existing order with
     * `created` false; other arguments with a used `$orderId` are a 409 ApiException. Without
     * `$address` the service derives one from the xpub set with setSettings().
     *
     * @param string|null $amount a decimal string such as '12.50', at most the asset's decimals
     * @param string|null $priceAmount instead of $amount: a decimal string such as '19.99' in $priceCurrency
     * @param int|null $expiresIn seconds, 10..604800 (default 3600)
     * @param array<string, mixed>|null $metadata returned on the order and in every webhook (up to 4 KiB of JSON)
     * @return array{ok: true, payment: Payment, created: bool}
     */
    public function create(
        string $orderId,
        string $networkSlug,
        ?string $amount = null,
        ?string $asset = null,
        ?string $address = null,
        ?int $expiresIn = null,
        ?string $webhookUrl = null,
        ?array $metadata = null,
        ?string $priceAmount = null,
        ?string $priceCurrency = null,
    ): array {
        if (($amount === null) === ($priceAmount === null)) {
            throw new \InvalidArgumentException('give $amount (in the asset) or $priceAmount with $priceCurrency');
        }
        $body = array_filter([
            'order_id' => $orderId,
            'network_slug' => $networkSlug,
            'amount' => $amount,
            'price_amount' => $priceAmount,
            'price_currency' => $priceCurrency,
            'asset' => $asset,
            'address' => $address,
            'expires_in' => $expiresIn,
            'webhook_url' => $webhookUrl,
            // An object even when empty: [] would encode as a JSON array, which is refused.
            'metadata' => $metadata === null ? null : (object) $metadata,
        ], static fn ($v) => $v !== null);
        return $this->client->request('POST', '/v1/payments', [], $body);
    }

    /**
     * GET /v1/payments/{payment_id}.
     *
     * @return array{ok: true, payment: Payment}
     */
    public function get(string $paymentId): array
    {
        return $this->client->request('GET', '/v1/payments/' . rawurlencode($paymentId));
    }

    /**
     * GET /v1/payments: one page of orders, newest first (`$perPage` 1..200, default 50).
     *
     * @param PaymentStatus|null $status
     * @return array{ok: true, payments: list<Payment>, page: int, per_page: int, total: int}
     */
    public function list(?string $orderId = null, ?string $status = null, ?string $network = null, ?int $page = null, ?int $perPage = null): array
    {
        $query = ['order_id' => $orderId, 'status' => $status, 'network' => $network, 'page' => $page, 'per_page' => $perPage];
        return $this->client->request('GET', '/v1/payments', $query);
    }

    /**
     * Every order matching the filters, newest first, fetching page after page.
     *
     * @param PaymentStatus|null $status
     * @return \Generator<int, Payment>
     */
    public function all(?string $orderId = null, ?string $status = null, ?string $network = null, int $perPage = 200): \Generator
    {
        for ($page = 1; ; $page++) {
            $r = $this->list($orderId, $status, $network, $page, $perPage);
            foreach ($r['payments'] as $payment) {
                yield $payment;
            }
            if ($r['payments'] === [] || $page * $r['per_page'] >= $r['total']) {
                return;
            }
        }
    }

    /**
     * POST /v1/payments/{payment_id}/cancel: only a `pending` order (409 otherwise). It ends
     * `failed` with reason `canceled`; canceling it again answers the same order.
     *
     * @return array{ok: true, payment: Payment}
     */
    public function cancel(string $paymentId): array
    {
        return $this->client->request('POST', '/v1/payments/' . rawurlencode($paymentId) . '/cancel');
    }

    /**
     * GET /v1/payments/settings; `derived.evm.first_address` shows whose wallet the xpub is.
     *
     * @return PaymentSettings
     */
    public function settings(): array
    {
        return $this->client->request('GET', '/v1/payments/settings');
    }

    /**
     * PUT /v1/payments/settings: the arguments given replace theirs, the others are kept.
     *
     * `$evmXpub` is an extended public key (xpub... or tpub...); '' removes it. A new xpub
     * restarts derivation at index 0. `$utxoXpub` is the account key of a Bitcoin-style wallet
     * (zpub/ypub/xpub; vpub/upub/tpub on test networks), `$tronXpub` the xpub of m/44'/195'/0'.
     * `$displayName` is the name on the checkout page, `$redirectUrl` the https page it sends a
     * paid customer to (with ?order_id=); '' removes either. `$solanaWallet` is the merchant's
     * Solana address (`wallets.solana`): Solana orders are paid to it, each told apart by its own
     * Solana Pay `reference`; '' removes it.
     *
     * @param 'medium'|'high'|'severe'|null $amlFailAt the lowest risk level that fails an order
     * @param int|null $underpaidToleranceBps 0..10000 basis points an order may fall short and still be paid
     * @param array{amount: string, currency: string}|false|null $payoutsApprovalOver refunds and payouts worth more wait for a second owner's approval; false turns that off, null keeps it
     * @return PaymentSettings
     */
    public function setSettings(?string $evmXpub = null, ?string $amlFailAt = null, ?int $underpaidToleranceBps = null, ?bool $acceptLate = null, ?string $utxoXpub = null, ?string $tronXpub = null, ?string $displayName = null, ?string $redirectUrl = null, ?string $solanaWallet = null, array|false|null $payoutsApprovalOver = null): array
    {
        $xpubs = array_filter(['evm' => $evmXpub, 'utxo' => $utxoXpub, 'tron' => $tronXpub], static fn ($v) => $v !== null);
        $body = array_filter([
            'xpubs' => $xpubs === [] ? null : $xpubs,
            'aml_fail_at' => $amlFailAt,
            'underpaid_tolerance_bps' => $underpaidToleranceBps,
            'accept_late' => $acceptLate,
            'display_name' => $displayName,
            'redirect_url' => $redirectUrl,
            'wallets' => $solanaWallet === null ? null : ['solana' => $solanaWallet],
        ], static fn ($v) => $v !== null);
        if ($payoutsApprovalOver !== null) {
            $body['payouts_approval_over'] = $payoutsApprovalOver === false ? null : $payoutsApprovalOver;
        }
        return $this->client->request('PUT', '/v1/payments/settings', [], (object) $body);
    }
}
