<?php

declare(strict_types=1);

use Rpcctl\Client;
use Rpcctl\Exception\ApiException;
use Rpcctl\Exception\ConfigException;
use Rpcctl\Exception\NetworkException;
use Rpcctl\Signing;
use Rpcctl\Tests\Assert;

/** A scripted loopback server (php -S with tests/server/router.php). */
final class ScriptedServer
{
    public string $url;
    private string $dir;
    /** @var resource */
    private $process;

    public function __construct()
    {
        $this->dir = sys_get_temp_dir() . '/rpcctl-php-test-' . bin2hex(random_bytes(6));
        mkdir($this->dir);
        $port = self::freePort();
        $this->url = "http://127.0.0.1:$port";
        $cmd = [PHP_BINARY, '-S', "127.0.0.1:$port", __DIR__ . '/server/router.php'];
        $env = ['SCRIPT_DIR' => $this->dir, 'PATH' => getenv('PATH') ?: '/usr/bin:/bin'];
        $this->process = proc_open($cmd, [['pipe', 'r'], ['file', '/dev/null', 'w'], ['file', '/dev/null', 'w']], $pipes, null, $env);
        for ($i = 0; $i < 100; $i++) {
            $s = @fsockopen('127.0.0.1', $port, $errno, $errstr, 0.1);
            if ($s) {
                fclose($s);
                return;
            }
            usleep(50_000);
        }
        throw new RuntimeException('php -S did not start');
    }

    public static function freePort(): int
    {
        $s = stream_socket_server('tcp://127.0.0.1:0');
        $name = stream_socket_get_name($s, false);
        fclose($s);
        return (int) substr($name, strrpos($name, ':') + 1);
    }

    /** @param list<array{status: int, body: string, headers?: array<string, string>, sleep?: float}> $replies */
    public function script(array $replies): void
    {
        file_put_contents("$this->dir/replies.json", json_encode($replies));
        @unlink("$this->dir/seen.jsonl");
    }

    /** @return list<array{method: string, uri: string, headers: array<string, string>, body: string}> */
    public function seen(): array
    {
        $lines = @file("$this->dir/seen.jsonl", FILE_IGNORE_NEW_LINES) ?: [];
        return array_map(static fn ($l) => json_decode($l, true), $lines);
    }

    public function close(): void
    {
        proc_terminate($this->process);
        proc_close($this->process);
        array_map('unlink', glob("$this->dir/*") ?: []);
        rmdir($this->dir);
    }
}

function signedRight(array $s): bool
{
    $h = $s['headers'];
    return ($h['x-api-key'] ?? '') === 'key-1'
        && Signing::verify('secret-1', $h['x-timestamp'] ?? '', $s['method'], $s['uri'], $s['body'], $h['x-signature'] ?? '');
}

$server = new ScriptedServer();
register_shutdown_function(static fn () => $server->close());
$sleeps = [];
// A clock that the client's sleeps move forward, so waits cost no time in the tests.
$now = 1_700_000_000.25;
$client = new Client('key-1', 'secret-1', $server->url . '/', sleep: static function (float $s) use (&$sleeps, &$now): void {
    $sleeps[] = $s;
    $now += $s;
}, clock: static function () use (&$now): float {
    return $now;
});

return [
    'signs the exact bytes it sends, not the query' => static function () use ($server, $client): void {
        $server->script([['status' => 200, 'body' => '{"ok":true,"endpoint":{"id":7}}'], ['status' => 200, 'body' => '{"ok":true,"usage":{"days":7}}']]);
        Assert::same(7, $client->createEndpoint('main ✓/x', networkId: 1, envSlug: 'mainnet')['endpoint']['id']);
        Assert::same(7, $client->endpointsUsage(7)['usage']['days']);
        [$post, $get] = $server->seen();
        Assert::same(['name' => 'main ✓/x', 'network_id' => 1, 'env_slug' => 'mainnet'], json_decode($post['body'], true));
        Assert::same('application/json', $post['headers']['content-type']);
        Assert::same('/v1/endpoints/usage?days=7', $get['uri']);
        Assert::same('', $get['body']);
        Assert::true(signedRight($post) && signedRight($get), 'both requests verify');
    },
    'a string body is sent unchanged' => static function () use ($server, $client): void {
        $server->script([]);
        $raw = '{ "watch_id" : "w_1" }';
        $client->request('DELETE', '/v1/address-watch/addresses', [], $raw);
        Assert::same($raw, $server->seen()[0]['body']);
        Assert::true(signedRight($server->seen()[0]), 'verifies');
    },
    'ApiException carries the status and the error' => static function () use ($server, $client): void {
        $server->script([['status' => 400, 'body' => '{"ok":false,"error":"name: required"}'], ['status' => 502, 'body' => 'bad gateway']]);
        $e = Assert::throws(ApiException::class, fn () => $client->request('POST', '/v1/endpoints', [], []));
        Assert::same([400, 'name: required', 'E_VALIDATION'], [$e->status, $e->error, $e->getErrorCode()]);
        $e = Assert::throws(ApiException::class, fn () => $client->account());
        Assert::same('HTTP 502: bad gateway', $e->error);
    },
    'retries 429 after Retry-After, then succeeds' => static function () use ($server, $client, &$sleeps): void {
        $sleeps = [];
        $server->script([
            ['status' => 429, 'headers' => ['Retry-After' => '2'], 'body' => '{"ok":false,"error":"Too many requests"}'],
            ['status' => 200, 'body' => '{"ok":true,"user_id":7}'],
        ]);
        Assert::same(7, $client->request('POST', '/v1/endpoints', [], ['name' => 'x'])['user_id']);
        Assert::same([2.0], $sleeps);
        Assert::same(2, count($server->seen()));
    },
    'gives up on 429 after maxRetries' => static function () use ($server, $client): void {
        $limited = ['status' => 429, 'headers' => ['Retry-After' => '1'], 'body' => '{"ok":false,"error":"Too many requests"}'];
        $server->script([$limited, $limited, $limited, $limited]);
        $e = Assert::throws(ApiException::class, fn () => $client->account());
        Assert::same([429, 1, 'E_RATE_LIMIT'], [$e->status, $e->retryAfter, $e->getErrorCode()]);
        Assert::same(4, count($server->seen()));
    },
    'retries idempotent requests on connection errors only' => static function (): void {
        $sleeps = [];
        $dead = new Client('k', 's', 'http://127.0.0.1:' . ScriptedServer::freePort(), maxRetries: 2, sleep: static function (float $s) use (&$sleeps): void {
            $sleeps[] = $s;
        });
        Assert::throws(NetworkException::class, fn () => $dead->listEndpoints());
        Assert::same(2, count($sleeps));
        $sleeps = [];
        Assert::throws(NetworkException::class, fn () => $dead->createEndpoint('x', 1));
        Assert::same([], $sleeps);
    },
    'times out' => static function () use ($server): void {
        $server->script([['status' => 200, 'body' => '{}', 'sleep' => 1.0]]);
        $slow = new Client('k', 's', $server->url, timeout: 0.2, maxRetries: 0);
        Assert::throws(NetworkException::class, fn () => $slow->account());
        usleep(900_000); // let the single-threaded php -S finish the slow answer
    },
    'reads the environment and never shows the secret' => static function () use ($server): void {
        $server->script([]);
        putenv('PUBLIC_API_KEY=env-key');
        putenv('PUBLIC_API_SECRET=env-secret');
        putenv('PUBLIC_API_BASE=' . $server->url);
        try {
            $c = new Client();
            $c->account();
            Assert::same('env-key', $server->seen()[0]['headers']['x-api-key']);
            Assert::true(!str_contains(print_r($c, true), 'env-secret'), 'print_r shows the secret');
            putenv('PUBLIC_API_SECRET');
            Assert::throws(ConfigException::class, fn () => new Client());
        } finally {
            putenv('PUBLIC_API_KEY');
            putenv('PUBLIC_API_SECRET');
            putenv('PUBLIC_API_BASE');
        }
    },
    'paging helpers follow every page' => static function () use ($server, $client): void {
        $server->script([
            ['status' => 200, 'body' => '{"ok":true,"addresses":[{"watch_id":"w_1"},{"watch_id":"w_2"}],"page":1,"per_page":2,"total":3}'],
            ['status' => 200, 'body' => '{"ok":true,"addresses":[{"watch_id":"w_3"}],"page":2,"per_page":2,"total":3}'],
            ['status' => 200, 'body' => '{"ok":true,"events":[{"id":"1"},{"id":"2"}],"next_after":"2"}'],
            ['status' => 200, 'body' => '{"ok":true,"events":[],"next_after":"2"}'],
        ]);
        $ids = array_column(iterator_to_array($client->addressWatch->allAddresses(perPage: 2)), 'watch_id');
        Assert::same(['w_1', 'w_2', 'w_3'], $ids);
        Assert::same(['1', '2'], array_column(iterator_to_array($client->addressWatch->allEvents(limit: 2)), 'id'));
        Assert::same(
            ['/v1/address-watch/addresses?page=1&per_page=2', '/v1/address-watch/addresses?page=2&per_page=2', '/v1/address-watch/events?limit=2', '/v1/address-watch/events?after=2&limit=2'],
            array_column($server->seen(), 'uri'),
        );
    },
    'repeats an identical mutating request with the next second\'s signature' => static function () use ($server, $client, &$sleeps): void {
        // The service takes a mutating signature once; the same bytes again in the same second
        // would be refused as a replay.
        $sleeps = [];
        $server->script([]);
        $client->payments->cancel('pay_1');
        $client->payments->cancel('pay_1');
        $client->payments->get('pay_1');
        $client->payments->get('pay_1');
        [$first, $second, $get1, $get2] = $server->seen();
        Assert::same((int) $first['headers']['x-timestamp'] + 1, (int) $second['headers']['x-timestamp']);
        Assert::true($first['headers']['x-signature'] !== $second['headers']['x-signature'], 'a new signature');
        Assert::same(1, count($sleeps));
        Assert::true($sleeps[0] > 0 && $sleeps[0] <= 1.005, 'waits for the next second only');
        // GETs may repeat a signature; another body is another signature: no wait for either.
        Assert::same($get1['headers']['x-signature'], $get2['headers']['x-signature']);
        $client->renameEndpoint(1, 'a');
        $client->renameEndpoint(1, 'b');
        Assert::same(1, count($sleeps));
        Assert::true(signedRight($first) && signedRight($second), 'both verify');
    },
    're-signs once when another process sent the same request' => static function () use ($server, $client): void {
        $replayed = ['status' => 401, 'headers' => ['X-Rpcctl-Reason' => 'replayed'], 'body' => '{"ok":false,"error":"Invalid signature."}'];
        $server->script([$replayed, ['status' => 200, 'body' => '{"ok":true,"delivery":{"delivery_id":"7"}}']]);
        Assert::same('7', $client->addressWatch->redeliver('7')['delivery']['delivery_id']);
        [$a, $b] = $server->seen();
        Assert::same('/v1/address-watch/deliveries/7/redeliver', $a['uri']);
        Assert::same((int) $a['headers']['x-timestamp'] + 1, (int) $b['headers']['x-timestamp']);
        // Only once: then the refusal surfaces, as E_REPLAYED.
        $server->script([$replayed, $replayed, $replayed]);
        $e = Assert::throws(ApiException::class, fn () => $client->request('POST', '/v1/payments', [], ['order_id' => 'x']));
        Assert::same([401, 'E_REPLAYED', 'replayed'], [$e->status, $e->getErrorCode(), $e->reason]);
        Assert::same(2, count($server->seen()));
        // A wrong signature is the same status and message, but not a replay: not re-signed.
        $server->script([['status' => 401, 'headers' => ['X-Rpcctl-Reason' => 'bad_signature'], 'body' => '{"ok":false,"error":"Invalid signature."}']]);
        $e = Assert::throws(ApiException::class, fn () => $client->request('POST', '/v1/payments', [], ['order_id' => 'y']));
        Assert::same(['E_AUTH', 'bad_signature'], [$e->getErrorCode(), $e->reason]);
        Assert::same(1, count($server->seen()));
    },
    'error codes are the same in every rpcctl library' => static function () use ($server): void {
        $cases = [
            [404, [], 'E_NOT_FOUND'], [400, [], 'E_VALIDATION'], [429, [], 'E_RATE_LIMIT'],
            [401, ['X-Rpcctl-Reason' => 'bad_signature'], 'E_AUTH'], [403, ['X-Rpcctl-Reason' => 'ip_not_allowed'], 'E_AUTH'],
            [401, ['X-Rpcctl-Reason' => 'replayed'], 'E_REPLAYED'], [409, [], 'E_API'], [500, [], 'E_API'],
        ];
        $once = new Client('key-1', 'secret-1', $server->url, maxRetries: 0);
        foreach ($cases as [$status, $headers, $code]) {
            $server->script([['status' => $status, 'headers' => $headers, 'body' => '{"ok":false,"error":"x"}']]);
            $e = Assert::throws(ApiException::class, fn () => $once->account());
            Assert::same($code, $e->getErrorCode(), "HTTP $status " . json_encode($headers));
        }
    },
    'payment routes' => static function () use ($server, $client): void {
        $order = ['payment_id' => 'pay_1', 'order_id' => '1042', 'status' => 'pending'];
        $server->script([
            ['status' => 200, 'body' => json_encode(['ok' => true, 'xpubs' => ['evm' => 'xpub1'], 'aml_fail_at' => 'severe', 'underpaid_tolerance_bps' => 50, 'accept_late' => false, 'derived' => new stdClass()])],
            ['status' => 200, 'body' => json_encode(['ok' => true, 'payment' => $order, 'created' => true])],
            ['status' => 200, 'body' => json_encode(['ok' => true, 'payments' => [$order, $order], 'page' => 1, 'per_page' => 2, 'total' => 3])],
            ['status' => 200, 'body' => json_encode(['ok' => true, 'payments' => [$order], 'page' => 2, 'per_page' => 2, 'total' => 3])],
        ]);
        Assert::same('severe', $client->payments->setSettings(evmXpub: 'xpub1', amlFailAt: 'severe', underpaidToleranceBps: 50, utxoXpub: 'zpub1', tronXpub: '', displayName: 'Corner Shop', redirectUrl: '')['aml_fail_at']);
        Assert::true($client->payments->create('1042', 'eth', '12.50', asset: 'USDC', metadata: [])['created'], 'created');
        Assert::same(3, count(iterator_to_array($client->payments->all(status: 'pending', perPage: 2), false)));
        [$put, $post, $page1, $page2] = $server->seen();
        Assert::same('{"xpubs":{"evm":"xpub1","utxo":"zpub1","tron":""},"aml_fail_at":"severe","underpaid_tolerance_bps":50,"display_name":"Corner Shop","redirect_url":""}', $put['body']);
        Assert::same(['POST', '/v1/payments'], [$post['method'], $post['uri']]);
        Assert::same('{"order_id":"1042","network_slug":"eth","amount":"12.50","asset":"USDC","metadata":{}}', $post['body']);
        Assert::same('/v1/payments?status=pending&page=1&per_page=2', $page1['uri']);
        Assert::same('/v1/payments?status=pending&page=2&per_page=2', $page2['uri']);
        $server->script([]);
        $client->payments->cancel('pay_a/b');
        Assert::same('/v1/payments/pay_a%2Fb/cancel', $server->seen()[0]['uri']);
    },
    'a payment priced in fiat' => static function () use ($server, $client): void {
        $order = ['payment_id' => 'pay_2', 'order_id' => '1044', 'price_amount' => '19.99', 'price_currency' => 'EUR', 'rate' => '2800', 'rate_source' => 'http'];
        $server->script([['status' => 200, 'body' => json_encode(['ok' => true, 'payment' => $order, 'created' => true])]]);
        Assert::same('2800', $client->payments->create('1044', 'eth', priceAmount: '19.99', priceCurrency: 'EUR')['payment']['rate']);
        Assert::same('{"order_id":"1044","network_slug":"eth","price_amount":"19.99","price_currency":"EUR"}', $server->seen()[0]['body']);
        // Exactly one of $amount and $priceAmount, refused before anything is sent.
        Assert::throws(\InvalidArgumentException::class, fn () => $client->payments->create('1045', 'eth', '1', priceAmount: '1', priceCurrency: 'EUR'));
        Assert::throws(\InvalidArgumentException::class, fn () => $client->payments->create('1045', 'eth'));
        Assert::same(1, count($server->seen()));
    },
    'refund and payout routes' => static function () use ($server, $client): void {
        $refund = ['refund_id' => 'rf_1', 'status' => 'awaiting_payment'];
        $payout = ['payout_id' => 'po_1', 'status' => 'awaiting_payment', 'lines' => []];
        $canceled = ['payout_id' => 'po_2', 'status' => 'canceled', 'lines' => []];
        $ok = static fn (array $a) => ['status' => 200, 'body' => json_encode(['ok' => true] + $a)];
        $server->script([
            $ok(['refund' => $refund]), $ok(['refund' => $refund]), $ok(['refunds' => [$refund]]), $ok(['payout' => $payout]),
            // The service filters: all() passes the status on and stops once it has read total.
            $ok(['payouts' => [$payout, $payout], 'page' => 1, 'per_page' => 2, 'total' => 3]), $ok(['payouts' => [$payout], 'page' => 2, 'per_page' => 2, 'total' => 3]),
            $ok(['payout' => $payout]), $ok(['payout' => $payout]), $ok(['payout' => $canceled]),
            $ok(['psbt' => 'cHNidP8=', 'fee_raw' => '141']), $ok(['payout' => $payout, 'tx_hash' => 'ab']),
            ['status' => 409, 'body' => '{"ok":false,"error":"po_1: every line has money on the way or arrived; nothing to cancel"}'],
        ]);
        Assert::same('rf_1', $client->refunds->create('pay_1', address: '0xabc', reference: 'r-1')['refund']['refund_id']);
        $client->refunds->create('pay_1', amount: '0.50', linkExpiresIn: 3600);
        Assert::same(1, count($client->refunds->list('pay_1')['refunds']));
        $client->payouts->create([['network' => 'eth', 'address' => '0xabc', 'amount' => '1.25', 'reference' => 'inv-1']]);
        Assert::same(['po_1', 'po_1', 'po_1'], array_map(static fn ($p) => $p['payout_id'], iterator_to_array($client->payouts->all(status: 'awaiting_payment', perPage: 2), false)));
        $client->payouts->get('po_1');
        $client->payouts->approve('po_1');
        Assert::same('canceled', $client->payouts->cancel('po_2')['payout']['status']);
        Assert::same('141', $client->payouts->psbt('po_1', feeRate: '2.5')['fee_raw']);
        Assert::same('ab', $client->payouts->submitTransaction('po_1', '0200', broadcast: false)['tx_hash']);
        $e = Assert::throws(ApiException::class, fn () => $client->payouts->cancel('po_1'));
        Assert::same([409, 'E_API'], [$e->status, $e->getErrorCode()]);
        Assert::throws(\InvalidArgumentException::class, fn () => $client->payouts->create([['network' => 'eth', 'address' => '0xabc', 'amount' => 1.25]]));
        Assert::same([
            'POST /v1/payments/pay_1/refunds {"address":"0xabc","reference":"r-1"}',
            'POST /v1/payments/pay_1/refunds {"amount":"0.50","link_expires_in":3600}',
            'GET /v1/payments/pay_1/refunds ',
            'POST /v1/payouts {"lines":[{"network":"eth","address":"0xabc","amount":"1.25","reference":"inv-1"}]}',
            'GET /v1/payouts?status=awaiting_payment&page=1&per_page=2 ',
            'GET /v1/payouts?status=awaiting_payment&page=2&per_page=2 ',
            'GET /v1/payouts/po_1 ',
            'POST /v1/payouts/po_1/approve ',
            'POST /v1/payouts/po_2/cancel ',
            'GET /v1/payouts/po_1/psbt?fee_rate=2.5 ',
            'POST /v1/payouts/po_1/transaction {"signed_transaction":"0200","broadcast":false}',
            'POST /v1/payouts/po_1/cancel ',
        ], array_map(static fn ($s) => "{$s['method']} {$s['uri']} {$s['body']}", $server->seen()));
        Assert::true(signedRight($server->seen()[3]), 'signed');
    },
    'wallets.solana and the approval threshold in the settings' => static function () use ($server, $client): void {
        $server->script([]);
        $client->payments->setSettings(solanaWallet: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM', payoutsApprovalOver: ['amount' => '1000', 'currency' => 'USD']);
        $client->payments->setSettings(payoutsApprovalOver: false);
        Assert::same([
            '{"wallets":{"solana":"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"},"payouts_approval_over":{"amount":"1000","currency":"USD"}}',
            '{"payouts_approval_over":null}',
        ], array_map(static fn ($s) => $s['body'], $server->seen()));
    },
];
