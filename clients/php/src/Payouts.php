<?php

declare(strict_types=1);

namespace Rpcctl;

/**
 * Payouts of up to 1,000 lines, as `$client->payouts`; a refund's `rf_` id works here too.
 *
 * A developer key's payout, or one worth more than the settings' `payouts_approval_over`, waits
 * for another owner's approve(). The merchant's own wallet pays each line's
 * `payment_request['uri']`, or signs the PSBT of psbt() and hands it to submitTransaction().
 * Amounts are decimal strings ('12.50'), never floats.
 *
 * @phpstan-type PayoutStatus 'awaiting_approval'|'awaiting_address'|'awaiting_payment'|'sent'|'completed'|'canceled'
 * @phpstan-type PaymentRequest array{uri: string, qr_svg: ?string}
 * @phpstan-type PayoutLine array{line: int, status: PayoutStatus, network: string, asset: string, asset_symbol: string, decimals: int, address: ?string, amount: string, amount_raw: string, price_amount: ?string, price_currency: ?string, rate: ?string, reference: ?string, tx_hash: ?string, expected_tx: ?string, lifecycle: string, payment_request: PaymentRequest|null, updated_at: string}
 * @phpstan-type Payout array{payout_id: string, status: PayoutStatus, approval: 'not_needed'|'awaiting'|'approved', approval_reason: 'role'|'amount'|null, created_by: string, approved_by: ?string, approved_at: ?string, fiat_total: ?string, fiat_currency: ?string, lines: list<PayoutLine>, line_count: int, created_at: string, updated_at: string}
 * @phpstan-type PayoutLineInput array{network: string, address: string, amount?: string, asset?: string, price_amount?: string, price_currency?: string, reference?: string}
 */
final class Payouts
{
    public function __construct(private readonly Client $client)
    {
    }

    /**
     * POST /v1/payouts: each line has `network`, `address`, `amount` (or `price_amount` with
     * `price_currency`), and optionally `asset` and `reference`.
     *
     * @param list<PayoutLineInput> $lines
     * @return array{ok: true, payout: Payout}
     */
    public function create(array $lines): array
    {
        foreach ($lines as $i => $line) {
            foreach (['amount', 'price_amount'] as $key) {
                if (isset($line[$key]) && !is_string($line[$key])) {
                    throw new \InvalidArgumentException(sprintf('$lines[%d][%s] must be a decimal string such as "12.50": a %s has already lost precision', $i, $key, get_debug_type($line[$key])));
                }
            }
        }
        return $this->client->request('POST', '/v1/payouts', [], ['lines' => array_values($lines)]);
    }

    /**
     * GET /v1/payouts/{payout_id}: one payout (or refund) with its lines and payment requests.
     *
     * @return array{ok: true, payout: Payout}
     */
    public function get(string $payoutId): array
    {
        return $this->client->request('GET', '/v1/payouts/' . rawurlencode($payoutId));
    }

    /**
     * GET /v1/payouts: one page of payouts with `$status` (any when null), newest first, without
     * their lines (`$perPage` 1..200, default 50); `total` counts every payout with `$status`.
     *
     * @param PayoutStatus|null $status
     * @return array{ok: true, payouts: list<Payout>, page: int, per_page: int, total: int}
     */
    public function list(?string $status = null, ?int $page = null, ?int $perPage = null): array
    {
        return $this->client->request('GET', '/v1/payouts', ['status' => $status, 'page' => $page, 'per_page' => $perPage]);
    }

    /**
     * Every payout with `$status` (any when null), newest first, fetching page after page.
     *
     * @param PayoutStatus|null $status
     * @return \Generator<int, Payout>
     */
    public function all(?string $status = null, int $perPage = 200): \Generator
    {
        for ($page = 1; ; $page++) {
            $r = $this->list($status, $page, $perPage);
            foreach ($r['payouts'] as $payout) {
                yield $payout;
            }
            if ($r['payouts'] === [] || $page * $r['per_page'] >= $r['total']) {
                return;
            }
        }
    }

    /**
     * POST /v1/payouts/{payout_id}/approve: an owner other than its maker (403 for the maker).
     *
     * @return array{ok: true, payout: Payout}
     */
    public function approve(string $payoutId): array
    {
        return $this->client->request('POST', '/v1/payouts/' . rawurlencode($payoutId) . '/approve');
    }

    /**
     * POST /v1/payouts/{payout_id}/cancel: the lines nothing was paid to yet (409 when none is left).
     *
     * @return array{ok: true, payout: Payout}
     */
    public function cancel(string $payoutId): array
    {
        return $this->client->request('POST', '/v1/payouts/' . rawurlencode($payoutId) . '/cancel');
    }

    /**
     * GET /v1/payouts/{payout_id}/psbt: an unsigned BIP174 PSBT (base64) paying the lines
     * awaiting payment on a UTXO network. It reserves a change address (a developer's right).
     *
     * @param string|null $feeRate sat/vB, e.g. '2.5'
     * @return array{ok: true, psbt: string, fee_raw: ?string}
     */
    public function psbt(string $payoutId, ?string $feeRate = null): array
    {
        return $this->client->request('GET', '/v1/payouts/' . rawurlencode($payoutId) . '/psbt', ['fee_rate' => $feeRate]);
    }

    /**
     * POST /v1/payouts/{payout_id}/transaction: a signed transaction (hex, or a finalized PSBT
     * in base64), checked against the lines and broadcast unless `$broadcast` is false.
     *
     * @return array{ok: true, payout: Payout, tx_hash: string}
     */
    public function submitTransaction(string $payoutId, string $signedTransaction, ?bool $broadcast = null): array
    {
        $body = array_filter(['signed_transaction' => $signedTransaction, 'broadcast' => $broadcast], static fn ($v) => $v !== null);
        return $this->client->request('POST', '/v1/payouts/' . rawurlencode($payoutId) . '/transaction', [], $body);
    }
}
