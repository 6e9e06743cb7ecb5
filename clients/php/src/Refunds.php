<?php

declare(strict_types=1);

namespace Rpcctl;

/**
 * Refunds of payment orders, as `$client->refunds` (the service's docs/payments.md "Refunds and
 * payouts"). rpcctl prepares and tracks a refund; the merchant's own wallet pays it (the
 * refund's `payment_request['uri']`, or a PSBT from `$client->payouts->psbt()`). A refund's
 * `rf_` id works with every Payouts method.
 *
 * @phpstan-import-type PayoutStatus from Payouts
 * @phpstan-import-type PaymentRequest from Payouts
 * @phpstan-type Refund array{refund_id: string, payment_id: string, order_id: string, amount_kind: 'full'|'overpaid'|'asset'|'fiat_locked'|'fiat_current', approval: 'not_needed'|'awaiting'|'approved', approval_reason: 'role'|'amount'|null, created_by: string, approved_by: ?string, approved_at: ?string, fiat_total: ?string, fiat_currency: ?string, status: PayoutStatus, network: string, asset: string, asset_symbol: string, decimals: int, address: ?string, amount: string, amount_raw: string, price_amount: ?string, price_currency: ?string, rate: ?string, reference: ?string, tx_hash: ?string, expected_tx: ?string, lifecycle: string, payment_request: PaymentRequest|null, updated_at: string, refund_link: array{url: ?string, expires_at: string, claimed: bool}|null, created_at: string}
 */
final class Refunds
{
    public function __construct(private readonly Client $client)
    {
    }

    /**
     * POST /v1/payments/{payment_id}/refunds: refunds an order that received money (409 otherwise).
     *
     * Without `$address` the answer's `refund['refund_link']['url']` is a page for the customer
     * to give one (shown this once).
     *
     * @param string|null $amount 'full' (the default: what it received, less earlier refunds), 'overpaid', or a decimal string in the order's asset
     * @param string|null $priceAmount instead of $amount: a decimal string in the order's fiat currency, at $rate
     * @param 'locked'|'current'|null $rate the order's locked rate or today's, with $priceAmount
     * @param int|null $linkExpiresIn seconds the refund link works (300..2592000, default 7 days); only without $address
     * @return array{ok: true, refund: Refund}
     */
    public function create(
        string $paymentId,
        ?string $amount = null,
        ?string $address = null,
        ?string $reference = null,
        ?string $priceAmount = null,
        ?string $rate = null,
        ?int $linkExpiresIn = null,
    ): array {
        $body = array_filter([
            'amount' => $amount,
            'price_amount' => $priceAmount,
            'rate' => $rate,
            'address' => $address,
            'reference' => $reference,
            'link_expires_in' => $linkExpiresIn,
        ], static fn ($v) => $v !== null);
        return $this->client->request('POST', '/v1/payments/' . rawurlencode($paymentId) . '/refunds', [], (object) $body);
    }

    /**
     * GET /v1/payments/{payment_id}/refunds: the order's refunds, newest first.
     *
     * @return array{ok: true, refunds: list<Refund>}
     */
    public function list(string $paymentId): array
    {
        return $this->client->request('GET', '/v1/payments/' . rawurlencode($paymentId) . '/refunds');
    }
}
