<?php

declare(strict_types=1);

use Rpcctl\Signing;
use Rpcctl\Tests\Assert;

$cases = Assert::vectors('signatures.json');

return [
    'reproduces every signature vector' => static function () use ($cases): void {
        Assert::true(count($cases) >= 7, 'at least 7 vectors');
        foreach ($cases as $v) {
            $args = [$v['timestamp'], $v['method'], $v['request_target'], $v['body']];
            Assert::same($v['body_sha256'], Signing::sha256Hex($v['body']), $v['name']);
            Assert::same($v['canonical_string'], Signing::canonicalString(...$args), $v['name']);
            Assert::same($v['signature'], Signing::sign($v['secret'], ...$args), $v['name']);
            Assert::true(Signing::verify($v['secret'], ...[...$args, $v['signature']]), $v['name'] . ' verifies');
        }
    },
    'a re-encoded body does not verify' => static function () use ($cases): void {
        $v = array_values(array_filter($cases, static fn ($c) => str_starts_with($c['name'], 'Body with whitespace')))[0];
        $reencoded = json_encode(json_decode($v['body']), JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
        Assert::true($reencoded !== $v['body'], 'the vector has whitespace');
        Assert::true(!Signing::verify($v['secret'], $v['timestamp'], $v['method'], $v['request_target'], $reencoded, $v['signature']), 're-encoded verifies');
    },
    'refuses wrong signatures; uppercases the method' => static function () use ($cases): void {
        $v = $cases[0];
        $args = [$v['timestamp'], $v['method'], $v['request_target'], $v['body']];
        Assert::true(!Signing::verify($v['secret'], ...[...$args, substr($v['signature'], 0, -1)]), 'truncated');
        Assert::true(!Signing::verify('other', ...[...$args, $v['signature']]), 'other secret');
        Assert::same($v['signature'], Signing::sign($v['secret'], $v['timestamp'], 'get', $v['request_target'], ''));
    },
    'signs the path only' => static function (): void {
        Assert::same('/v1/endpoints/usage', Signing::signedPath('https://api.example/v1/endpoints/usage?days=7'));
        Assert::same('/v1/account', Signing::signedPath('/v1/account#x'));
    },
    'headers' => static function () use ($cases): void {
        $v = $cases[2];
        Assert::same(
            ['X-Api-Key' => 'key-1', 'X-Timestamp' => (string) $v['timestamp'], 'X-Signature' => $v['signature']],
            Signing::headers('key-1', $v['secret'], $v['method'], $v['request_target'], $v['body'], $v['timestamp']),
        );
    },
];
