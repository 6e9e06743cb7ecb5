<?php

declare(strict_types=1);

use Rpcctl\Exception\WebhookVerificationException;
use Rpcctl\Tests\Assert;
use Rpcctl\Webhook;

$cases = Assert::vectors('webhook-signatures.json');

return [
    'reproduces every webhook vector' => static function () use ($cases): void {
        Assert::true(count($cases) >= 3, 'at least 3 vectors');
        foreach ($cases as $v) {
            Assert::same($v['signature'], Webhook::sign($v['secret'], $v['timestamp'], $v['body']), $v['name']);
            Webhook::verify($v['secret'], (string) $v['timestamp'], $v['signature'], $v['body'], 300, $v['timestamp']);
        }
    },
    'constructEvent parses a verified body, headers in any case' => static function () use ($cases): void {
        $v = $cases[0];
        $event = Webhook::constructEvent($v['body'], ['x-timestamp' => (string) $v['timestamp'], 'X-SIGNATURE' => [$v['signature']]], $v['secret'], 300, $v['timestamp'] + 10);
        Assert::same('payment', $event['type']);
        Assert::same('in', $event['direction']);
    },
    'constructEvent parses refund and payout_line bodies' => static function () use ($cases): void {
        $byName = array_column($cases, null, 'name');
        $parse = static fn (array $v, string $body) => Webhook::constructEvent($body, ['X-Timestamp' => (string) $v['timestamp'], 'X-Signature' => $v['signature']], $v['secret'], 300, $v['timestamp']);
        $v = $byName['refund awaiting payment'];
        $refund = $parse($v, $v['body']);
        Assert::same(['refund', 'refund.awaiting_payment', 'rf_Q9xA2b3C4d5E6f7G', 'pay_4fQm0v2ZJr6Lk1dC', '1042', null], [$refund['type'], $refund['event'], $refund['refund_id'], $refund['payment_id'], $refund['order_id'], $refund['tx_hash']]);
        Assert::throws(WebhookVerificationException::class, fn () => $parse($v, str_replace('"0.25"', '"2.5"', $v['body'])));
        $v = $byName['payout line completed'];
        $line = $parse($v, $v['body']);
        Assert::same(['payout_line', 'payout.completed', 'po_Z1y2X3w4V5u6T7s8', 2, 'invoice-77', 2800123], [$line['type'], $line['event'], $line['payout_id'], $line['line'], $line['reference'], $line['block_height']]);
        Assert::throws(WebhookVerificationException::class, fn () => $parse($v, str_replace('"line":2', '"line":3', $v['body'])));
    },
    'refusals name the reason' => static function () use ($cases): void {
        $v = $cases[0];
        $ts = (string) $v['timestamp'];
        $now = $v['timestamp'];
        $cases = [
            'signature mismatch' => fn () => Webhook::verify($v['secret'], $ts, $v['signature'], str_replace('19000000', '19000001', $v['body']), 300, $now),
            'missing X-Signature' => fn () => Webhook::verify($v['secret'], $ts, '', $v['body'], 300, $now),
            'missing or invalid X-Timestamp' => fn () => Webhook::verify($v['secret'], '12a', $v['signature'], $v['body'], 300, $now),
            'timestamp outside tolerance' => fn () => Webhook::verify($v['secret'], $ts, $v['signature'], $v['body'], 300, $now + 301),
        ];
        foreach ($cases as $reason => $fn) {
            Assert::same($reason, Assert::throws(WebhookVerificationException::class, $fn)->reason);
        }
        Assert::throws(WebhookVerificationException::class, fn () => Webhook::verify('whsec_wrong', $ts, $v['signature'], $v['body'], 300, $now));
        Webhook::verify($v['secret'], $ts, $v['signature'], $v['body'], 0, 0); // tolerance 0: no freshness check
        $sig = Webhook::sign($v['secret'], $ts, 'not json');
        Assert::throws(WebhookVerificationException::class, fn () => Webhook::constructEvent('not json', ['X-Timestamp' => $ts, 'X-Signature' => $sig], $v['secret'], 300, $now));
    },
];
