<?php

declare(strict_types=1);

/*
 * Integration run against a real `rpcctl serve` (started by the repository's vitest harness).
 * Reads PUBLIC_API_KEY, PUBLIC_API_SECRET, PUBLIC_API_BASE and RPCCTL_WEBHOOK_SECRET; prints
 * one JSON line describing what it did. Its webhook receiver is a loopback socket served here.
 */

use Rpcctl\Client;
use Rpcctl\Exception\ApiException;
use Rpcctl\Exception\WebhookVerificationException;
use Rpcctl\Webhook;

spl_autoload_register(static function (string $class): void {
    if (str_starts_with($class, 'Rpcctl\\')) {
        require __DIR__ . '/../src/' . str_replace('\\', '/', substr($class, 7)) . '.php';
    }
});

function check(bool $ok, string $what): void
{
    if (!$ok) {
        fwrite(STDERR, "FAIL: $what\n");
        exit(1);
    }
}

/**
 * Serves one HTTP request on $server: returns [headers, body] and answers $status.
 *
 * @param resource $server
 * @return array{array<string, string>, string}|null null on timeout
 */
function acceptOne($server, float $timeout, callable $answer): ?array
{
    $conn = @stream_socket_accept($server, $timeout);
    if ($conn === false) {
        return null;
    }
    stream_set_timeout($conn, 5);
    $head = '';
    while (!str_contains($head, "\r\n\r\n") && !feof($conn)) {
        $head .= fread($conn, 1);
    }
    $headers = [];
    foreach (array_slice(explode("\r\n", trim($head)), 1) as $line) {
        [$name, $value] = array_map('trim', explode(':', $line, 2)) + [1 => ''];
        $headers[strtolower($name)] = $value;
    }
    $length = (int) ($headers['content-length'] ?? 0);
    $body = '';
    while (strlen($body) < $length && !feof($conn)) {
        $body .= fread($conn, $length - strlen($body));
    }
    $status = $answer($headers, $body);
    fwrite($conn, "HTTP/1.1 $status X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    fclose($conn);
    return [$headers, $body];
}

/**
 * Serves deliveries on $server until a verified one satisfies $matches (given the headers and
 * the event); each is also checked to be refused under a wrong secret.
 *
 * @param resource $server
 * @return array{headers: array<string, string>, event: array<string, mixed>, wrong_secret_refused: bool}
 */
function awaitDelivery($server, string $secret, string $what, callable $matches): array
{
    $deadline = microtime(true) + 20;
    while (microtime(true) < $deadline) {
        $event = null;
        $wrongRefused = false;
        $r = acceptOne($server, $deadline - microtime(true), static function (array $headers, string $body) use ($secret, &$event, &$wrongRefused): int {
            try {
                $event = Webhook::constructEvent($body, $headers, $secret);
            } catch (WebhookVerificationException) {
                return 400;
            }
            try {
                Webhook::constructEvent($body, $headers, 'whsec_wrong');
            } catch (WebhookVerificationException) {
                $wrongRefused = true;
            }
            return 200;
        });
        if ($r !== null && $event !== null && $matches($r[0], $event)) {
            return ['headers' => $r[0], 'event' => $event, 'wrong_secret_refused' => $wrongRefused];
        }
    }
    check(false, "no verified delivery of $what within 20 s");
    exit(1);
}

const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
const SOLANA_ADDRESS = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const PAYOUT_ADDRESS = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
// BIP32 test vector 1's master public key: a public key anyone may use, derivation only.
const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
$secret = (string) getenv('RPCCTL_WEBHOOK_SECRET');
$client = new Client();

$account = $client->account();
check($account['plan']['slug'] === 'pro', 'account plan ' . json_encode($account));

$created = $client->createEndpoint('php-it', networkId: 1, envSlug: 'mainnet')['endpoint'];
check(in_array($created['id'], array_column($client->listEndpoints()['endpoints'], 'id'), true), 'endpoint listed');
$allowed = $client->setAllowedIps($created['id'], ['203.0.113.7', '2001:db8::1'])['endpoint']['allowed_ips'];
check($allowed === ['203.0.113.7', '2001:db8::1'], 'allowed_ips ' . json_encode($allowed));
check($client->setEndpointStatus($created['id'], 'paused')['endpoint']['status'] === 'paused', 'paused');
$renamed = $client->renameEndpoint($created['id'], 'php-it-renamed')['endpoint'];
check($renamed['name'] === 'php-it-renamed' && $renamed['status'] === 'paused', 'renamed ' . json_encode($renamed));
check($client->getEndpoint($created['id'])['endpoint']['allowed_ips'] === $allowed, 'getEndpoint');
try {
    $client->setAllowedIps($created['id'], ['not-an-ip']);
    check(false, 'a bad IP was accepted');
} catch (ApiException $e) {
    $badRequest = ['status' => $e->status, 'error' => $e->error, 'code' => $e->getErrorCode()];
}
try {
    $client->getEndpoint(999999999);
    check(false, 'an unknown endpoint was found');
} catch (ApiException $e) {
    $notFound = ['status' => $e->status, 'code' => $e->getErrorCode()];
}

$watch = $client->addressWatch->add('eth', ADDRESS);
check($watch['created'] === true, 'watch created');
$listed = array_column(iterator_to_array($client->addressWatch->allAddresses('eth')), 'watch_id');
check(in_array($watch['watch_id'], $listed, true), 'watch listed');
$solanaWatch = $client->addressWatch->add('solana', SOLANA_ADDRESS);
check($solanaWatch['address'] === SOLANA_ADDRESS, 'solana address kept as given');

$server = stream_socket_server('tcp://127.0.0.1:0');
$name = stream_socket_get_name($server, false);
$client->addressWatch->setWebhook("http://$name/hooks", true);
$queued = $client->addressWatch->testWebhook('payment', 'eth');
$got = awaitDelivery($server, $secret, $queued['webhook_id'], static fn (array $h) => ($h['x-webhook-id'] ?? '') === $queued['webhook_id']);

// Payment orders: an xpub, an order (made twice: the same request again within its second
// must be re-signed, and answers the same order), found by get and by the paging generator,
// then canceled (twice, likewise), which sends a payment_order webhook to the receiver.
$settings = $client->payments->setSettings(evmXpub: XPUB, displayName: 'PHP Shop');
check(($settings['xpubs']['evm'] ?? null) === XPUB && $settings['display_name'] === 'PHP Shop', 'settings ' . json_encode($settings));
$firstAddress = $settings['derived']['evm']['first_address'];
$order = ['orderId' => 'php-it-1', 'networkSlug' => 'eth', 'amount' => '0.25', 'metadata' => ['lang' => 'php']];
$payment = $client->payments->create(...$order);
check($payment['created'] === true && $payment['payment']['status'] === 'pending', 'create ' . json_encode($payment));
$pid = $payment['payment']['payment_id'];
check(str_ends_with($payment['payment']['checkout_url'], '/pay/' . $pid), 'checkout_url ' . json_encode($payment['payment']));
$again = $client->payments->create(...$order);
check($again['created'] === false && $again['payment']['payment_id'] === $pid, 'create again ' . json_encode($again));
check($client->payments->get($pid)['payment']['address'] === $firstAddress, 'get: not the first derived address');
$listedPayments = array_column(iterator_to_array($client->payments->all(status: 'pending', perPage: 1), false), 'payment_id');
check($listedPayments === [$pid], 'all() ' . json_encode($listedPayments));
$canceled = $client->payments->cancel($pid)['payment'];
check($canceled['status'] === 'failed' && $canceled['reason'] === 'canceled', 'cancel ' . json_encode($canceled));
check($client->payments->cancel($pid)['payment']['status'] === 'failed', 'cancel again');
try {
    $client->payments->create('php-it-1', 'eth', '1');
    check(false, 'another body with a used order_id was accepted');
} catch (ApiException $e) {
    check($e->status === 409, 'conflict ' . $e->getMessage());
}
// A fiat price reaches the service as price_amount + price_currency: this serve has no rate
// for ETH/USD, so it refuses with the contract's message (and makes no order).
try {
    $client->payments->create('php-it-fiat', 'eth', priceAmount: '19.99', priceCurrency: 'USD');
    check(false, 'a fiat order without a rate was accepted');
} catch (ApiException $e) {
    check($e->status === 400 && $e->error === 'Rate unavailable for ETH/USD.', 'fiat ' . $e->getMessage());
}
$hook = awaitDelivery($server, $secret, 'the payment_order webhook', static fn (array $h, array $event) => ($event['payment_id'] ?? null) === $pid);

// Refunds: the canceled order received nothing, so the service refuses one (409), and lists none.
try {
    $client->refunds->create($pid, address: PAYOUT_ADDRESS);
    check(false, 'a refund of an order that received nothing was accepted');
} catch (ApiException $e) {
    $refundRefused = ['status' => $e->status, 'code' => $e->getErrorCode(), 'error' => $e->error];
}
check($client->refunds->list($pid)['refunds'] === [], 'refunds of the canceled order');
// A payout of one line: awaiting payment (an owner's key, no threshold), listed, read back,
// then canceled; each of the two states sends a payout_line webhook, the cancel's is awaited.
$made = $client->payouts->create([['network' => 'eth', 'address' => PAYOUT_ADDRESS, 'amount' => '0.001', 'reference' => 'php-it-payout']])['payout'];
check($made['status'] === 'awaiting_payment' && $made['line_count'] === 1, 'payout ' . json_encode($made));
$po = $made['payout_id'];
$listedPayouts = array_column(iterator_to_array($client->payouts->all(status: 'awaiting_payment'), false), 'payout_id');
$awaiting = $client->payouts->list(status: 'awaiting_payment', page: 1, perPage: 1);
check(in_array($po, $listedPayouts, true) && $awaiting['payouts'][0]['payout_id'] === $po, 'payouts ' . json_encode($listedPayouts));
$line = $client->payouts->get($po)['payout']['lines'][0];
// The URI is EIP-681 when the node tells the chain id; this service's node is away: the address alone.
check($line['payment_request'] !== null && str_contains($line['payment_request']['uri'], PAYOUT_ADDRESS), 'line ' . json_encode($line));
$payoutCanceled = $client->payouts->cancel($po)['payout'];
check($payoutCanceled['status'] === 'canceled', 'payout cancel ' . json_encode($payoutCanceled));
$awaitingAfter = $client->payouts->list(status: 'awaiting_payment');
$payoutHook = awaitDelivery($server, $secret, 'the payout_line webhook', static fn (array $h, array $event) => ($event['payout_id'] ?? null) === $po && ($event['event'] ?? null) === 'payout.canceled');

// Solana: the merchant's one wallet is a setting; a Solana order is paid to it and told apart
// by its own Solana Pay reference.
check(($client->payments->setSettings(solanaWallet: SOLANA_ADDRESS)['wallets']['solana'] ?? null) === SOLANA_ADDRESS, 'wallets.solana not set');
$wallet = $client->payments->settings()['wallets']['solana'];
$sol = $client->payments->create('php-it-sol', 'solana', '0.5')['payment'];
check($sol['address'] === $wallet && is_string($sol['reference']) && $sol['reference'] !== $wallet, 'solana order ' . json_encode($sol));

// Redeliver the test webhook once the service has recorded its first delivery.
$deadline = microtime(true) + 20;
while (true) {
    $delivery = null;
    foreach ($client->addressWatch->allDeliveries() as $d) {
        if ($d['webhook_id'] === $queued['webhook_id']) {
            $delivery = $d;
        }
    }
    if ($delivery !== null && $delivery['status'] === 'delivered') {
        break;
    }
    check(microtime(true) < $deadline, 'delivery not recorded as delivered: ' . json_encode($delivery));
    usleep(100_000);
}
$redelivered = $client->addressWatch->redeliver($delivery['delivery_id'])['delivery'];
check($redelivered['delivery_id'] === $delivery['delivery_id'], 'redeliver ' . json_encode($redelivered));
awaitDelivery($server, $secret, 'the redelivery', static fn (array $h) => ($h['x-webhook-id'] ?? '') === $queued['webhook_id']);

echo json_encode([
    'endpoint_id' => $created['id'],
    'renamed' => $renamed['name'],
    'allowed_ips' => $allowed,
    'bad_request' => $badRequest,
    'not_found' => $notFound,
    'watch_id' => $watch['watch_id'],
    'solana_watch_id' => $solanaWatch['watch_id'],
    'webhook_id' => $queued['webhook_id'],
    'event' => $got['event'],
    'wrong_secret_refused' => $got['wrong_secret_refused'],
    'payment' => ['payment_id' => $pid, 'order_id' => 'php-it-1', 'address' => $firstAddress, 'created_again' => $again['created']],
    'payment_event' => $hook['event'],
    'refund_refused' => $refundRefused,
    'payout' => [
        'payout_id' => $po, 'listed' => in_array($po, $listedPayouts, true), 'status' => $payoutCanceled['status'],
        'awaiting_total' => [$awaiting['total'], $awaitingAfter['total']],
    ],
    'payout_event' => $payoutHook['event'],
    'solana' => ['wallet' => $wallet, 'payment_id' => $sol['payment_id'], 'reference' => $sol['reference']],
    'redelivered' => ['delivery_id' => $delivery['delivery_id'], 'webhook_id' => $queued['webhook_id'], 'arrivals' => 2],
], JSON_UNESCAPED_SLASHES), "\n";
