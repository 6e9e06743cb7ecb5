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

const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
$secret = (string) getenv('RPCCTL_WEBHOOK_SECRET');
$client = new Client();

$account = $client->account();
check($account['plan']['slug'] === 'pro', 'account plan ' . json_encode($account));

$created = $client->createEndpoint('php-it', networkId: 1, envSlug: 'mainnet')['endpoint'];
check(in_array($created['id'], array_column($client->listEndpoints()['endpoints'], 'id'), true), 'endpoint listed');
$allowed = $client->setAllowedIps($created['id'], ['203.0.113.7', '2001:db8::1'])['endpoint']['allowed_ips'];
check($allowed === ['203.0.113.7', '2001:db8::1'], 'allowed_ips ' . json_encode($allowed));
check($client->setEndpointStatus($created['id'], 'paused')['endpoint']['status'] === 'paused', 'paused');
check($client->getEndpoint($created['id'])['endpoint']['allowed_ips'] === $allowed, 'getEndpoint');
try {
    $client->setAllowedIps($created['id'], ['not-an-ip']);
    check(false, 'a bad IP was accepted');
} catch (ApiException $e) {
    $badRequest = ['status' => $e->status, 'error' => $e->error];
}

$watch = $client->addressWatch->add('eth', ADDRESS);
check($watch['created'] === true, 'watch created');
$listed = array_column(iterator_to_array($client->addressWatch->allAddresses('eth')), 'watch_id');
check(in_array($watch['watch_id'], $listed, true), 'watch listed');

$server = stream_socket_server('tcp://127.0.0.1:0');
$name = stream_socket_get_name($server, false);
$client->addressWatch->setWebhook("http://$name/hooks", true);
$queued = $client->addressWatch->testWebhook('payment', 'eth');
$deadline = microtime(true) + 20;
$got = null;
while ($got === null && microtime(true) < $deadline) {
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
    if ($r !== null && $event !== null && ($r[0]['x-webhook-id'] ?? '') === $queued['webhook_id']) {
        $got = ['event' => $event, 'wrong_secret_refused' => $wrongRefused];
    }
}
check($got !== null, "no verified delivery of {$queued['webhook_id']} within 20 s");

echo json_encode([
    'endpoint_id' => $created['id'],
    'allowed_ips' => $allowed,
    'bad_request' => $badRequest,
    'watch_id' => $watch['watch_id'],
    'webhook_id' => $queued['webhook_id'],
    'event' => $got['event'],
    'wrong_secret_refused' => $got['wrong_secret_refused'],
], JSON_UNESCAPED_SLASHES), "\n";
