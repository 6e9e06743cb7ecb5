<?php

declare(strict_types=1);

namespace Rpcctl;

/**
 * The Address Watch routes, as `$client->addressWatch`.
 *
 * Addresses in their network's form (EVM 0x, Stellar G..., Bitcoin-style, Tron T..., Solana base58
 * public key). In events, `token` is the ERC-20/TRC-20 contract, Stellar CODE:ISSUER or Solana SPL
 * mint (null for the native coin), `amount` a raw integer string in the smallest unit (wei, sat,
 * sun, stroops, lamports), `tx_hash` the transaction hash (on Solana its signature).
 *
 * @phpstan-type WatchedAddress array{watch_id: string, network_slug: string, address: string, created_at: string}
 * @phpstan-type WatchEvent array<string, mixed>
 * @phpstan-type WebhookAttempt array{attempt: int, started_at: string, status_code: ?int, duration_ms: int, error: ?string, next_retry_at: ?string, response_excerpt: ?string}
 * @phpstan-type WebhookDelivery array{delivery_id: string, webhook_id: string, event_id: ?string, type: string, network: string, test: bool, status: 'pending'|'delivered'|'failed'|'cancelled', attempt_count: int, next_retry_at: ?string, last_status_code: ?int, last_error: ?string, created_at: string, delivered_at: ?string, attempts: list<WebhookAttempt>}
 * @phpstan-type WebhookSettings array{ok: true, url: ?string, enabled: bool, events: array{payment: bool, payment_networks: list<string>, payout: bool, payout_networks: list<string>, block: bool, block_networks: list<string>}, egress_ips: list<string>}
 */
final class AddressWatch
{
    public function __construct(private readonly Client $client)
    {
    }

    /**
     * GET /v1/address-watch/account: slots and webhook flags.
     *
     * @return array{ok: true, slots_total: int, slots_used: int, slots_free: int, webhook_configured: bool, webhook_enabled: bool}
     */
    public function account(): array
    {
        return $this->client->request('GET', '/v1/address-watch/account');
    }

    /**
     * GET /v1/address-watch/addresses: one page of watched addresses.
     *
     * @return array{ok: true, addresses: list<WatchedAddress>, page: int, per_page: int, total: int}
     */
    public function list(?string $networkSlug = null, ?string $address = null, ?int $page = null, ?int $perPage = null): array
    {
        $query = ['network_slug' => $networkSlug, 'address' => $address, 'page' => $page, 'per_page' => $perPage];
        return $this->client->request('GET', '/v1/address-watch/addresses', $query);
    }

    /**
     * Every watched address, fetching page after page.
     *
     * @return \Generator<int, WatchedAddress>
     */
    public function allAddresses(?string $networkSlug = null, ?string $address = null, int $perPage = 200): \Generator
    {
        for ($page = 1; ; $page++) {
            $r = $this->list($networkSlug, $address, $page, $perPage);
            foreach ($r['addresses'] as $item) {
                yield $item;
            }
            if ($r['addresses'] === [] || $page * $r['per_page'] >= $r['total']) {
                return;
            }
        }
    }

    /**
     * POST /v1/address-watch/addresses. Idempotent: the same address returns its watch with `created` false.
     * `$address` in its network's form: EVM 0x, Stellar G..., Bitcoin-style, Tron T..., or a Solana
     * public key (base58, kept as given).
     *
     * @return array{ok: true, watch_id: string, network_slug: string, address: string, created_at: string, watch: WatchedAddress, created: bool}
     */
    public function add(string $networkSlug, string $address): array
    {
        return $this->client->request('POST', '/v1/address-watch/addresses', [], ['network_slug' => $networkSlug, 'address' => $address]);
    }

    /**
     * DELETE /v1/address-watch/addresses (the watch_id body is signed).
     *
     * @return array{ok: true, watch_id: string}
     */
    public function remove(string $watchId): array
    {
        return $this->client->request('DELETE', '/v1/address-watch/addresses', [], ['watch_id' => $watchId]);
    }

    /**
     * GET /v1/address-watch/events: oldest first; pass `next_after` back as `$after`.
     * `$after = 'latest'` returns no events and the newest id: where a follower starts.
     *
     * @param 'payment'|'payout'|'other'|'block'|null $type
     * @return array{ok: true, events: list<WatchEvent>, next_after: ?string, retention_days: ?int}
     */
    public function events(?string $after = null, ?int $limit = null, ?string $network = null, ?string $type = null, ?string $watchId = null): array
    {
        $query = ['after' => $after, 'limit' => $limit, 'network' => $network, 'type' => $type, 'watch_id' => $watchId];
        return $this->client->request('GET', '/v1/address-watch/events', $query);
    }

    /**
     * Every event after `$after` up to the end of the feed, page after page.
     *
     * @return \Generator<int, WatchEvent>
     */
    public function allEvents(?string $after = null, ?string $network = null, ?string $type = null, ?string $watchId = null, int $limit = 100): \Generator
    {
        while (true) {
            $r = $this->events($after, $limit, $network, $type, $watchId);
            foreach ($r['events'] as $item) {
                yield $item;
            }
            if ($r['events'] === [] || $r['next_after'] === null || $r['next_after'] === $after) {
                return;
            }
            $after = $r['next_after'];
        }
    }

    /**
     * GET /v1/address-watch/webhook: URL, switch, filters and the egress IPs to allow.
     *
     * @return WebhookSettings
     */
    public function webhook(): array
    {
        return $this->client->request('GET', '/v1/address-watch/webhook');
    }

    /**
     * PUT /v1/address-watch/webhook. Filter keys given replace theirs; `$events = null` keeps all filters.
     *
     * @param array{payment?: bool, payment_networks?: list<string>, payout?: bool, payout_networks?: list<string>, block?: bool, block_networks?: list<string>}|null $events
     * @return WebhookSettings
     */
    public function setWebhook(string $url, bool $enabled = true, ?array $events = null): array
    {
        $body = ['url' => $url, 'enabled' => $enabled];
        if ($events !== null) {
            $body['events'] = (object) $events;
        }
        return $this->client->request('PUT', '/v1/address-watch/webhook', [], $body);
    }

    /**
     * POST /v1/address-watch/webhook/test: queue a sample delivery (never billed).
     *
     * @param 'payment'|'payout'|'other'|'block' $type
     * @return array{ok: true, queued: true, webhook_id: string, body: string}
     */
    public function testWebhook(string $type, string $network): array
    {
        return $this->client->request('POST', '/v1/address-watch/webhook/test', [], ['type' => $type, 'network' => $network]);
    }

    /**
     * GET /v1/address-watch/deliveries: newest first, with every attempt.
     *
     * @param 'pending'|'delivered'|'failed'|'cancelled'|null $status
     * @return array{ok: true, deliveries: list<WebhookDelivery>, next_before: ?string, retention_days: ?int}
     */
    public function deliveries(?int $limit = null, ?string $before = null, ?string $status = null, ?string $eventId = null): array
    {
        $query = ['limit' => $limit, 'before' => $before, 'status' => $status, 'event_id' => $eventId];
        return $this->client->request('GET', '/v1/address-watch/deliveries', $query);
    }

    /**
     * Every delivery, newest first, page after page.
     *
     * @param 'pending'|'delivered'|'failed'|'cancelled'|null $status
     * @return \Generator<int, WebhookDelivery>
     */
    public function allDeliveries(?string $status = null, ?string $eventId = null, int $limit = 100): \Generator
    {
        $before = null;
        while (true) {
            $r = $this->deliveries($limit, $before, $status, $eventId);
            foreach ($r['deliveries'] as $item) {
                yield $item;
            }
            if ($r['deliveries'] === [] || $r['next_before'] === null) {
                return;
            }
            $before = $r['next_before'];
        }
    }

    /**
     * POST /v1/address-watch/deliveries/{delivery_id}/redeliver: sends a delivery again now.
     * Same X-Webhook-Id, next attempt number; resending a delivered one is not billed again.
     * A delivery being sent at this moment is refused with a 409.
     *
     * @return array{ok: true, delivery: WebhookDelivery}
     */
    public function redeliver(string $deliveryId): array
    {
        return $this->client->request('POST', '/v1/address-watch/deliveries/' . rawurlencode($deliveryId) . '/redeliver');
    }
}
