<?php

declare(strict_types=1);

namespace Rpcctl;

/**
 * Public API request signing: lowercase hex HMAC-SHA256 over a four-line canonical string.
 */
final class Signing
{
    /** Lowercase hex SHA-256 of the raw body bytes. */
    public static function sha256Hex(string $body = ''): string
    {
        return hash('sha256', $body);
    }

    /** The part of a request target that is signed: the path, without host, query or fragment. */
    public static function signedPath(string $target): string
    {
        if (str_contains($target, '://')) {
            $target = (string) parse_url($target, PHP_URL_PATH);
        }
        $cut = strcspn($target, '?#');
        return substr($target, 0, $cut);
    }

    /** `{timestamp}\n{METHOD}\n{/v1/path}\n{sha256 hex of body}`, no trailing newline. */
    public static function canonicalString(int|string $timestamp, string $method, string $path, string $body = ''): string
    {
        return $timestamp . "\n" . strtoupper($method) . "\n" . self::signedPath($path) . "\n" . self::sha256Hex($body);
    }

    /**
     * The X-Signature of a request. `$body` must be exactly the bytes sent: re-encoding JSON
     * after signing breaks the signature.
     */
    public static function sign(string $secret, int|string $timestamp, string $method, string $path, string $body = ''): string
    {
        return hash_hmac('sha256', self::canonicalString($timestamp, $method, $path, $body), $secret);
    }

    /** Whether `$signature` is the signature of this request (constant-time). */
    public static function verify(string $secret, int|string $timestamp, string $method, string $path, string $body, string $signature): bool
    {
        return hash_equals(self::sign($secret, $timestamp, $method, $path, $body), $signature);
    }

    /**
     * The three headers of a Public API request, as `Name: value` lines for cURL or any client.
     *
     * @return array{X-Api-Key: string, X-Timestamp: string, X-Signature: string}
     */
    public static function headers(string $apiKey, string $secret, string $method, string $path, string $body = '', ?int $timestamp = null): array
    {
        $timestamp ??= time();
        return [
            'X-Api-Key' => $apiKey,
            'X-Timestamp' => (string) $timestamp,
            'X-Signature' => self::sign($secret, $timestamp, $method, $path, $body),
        ];
    }
}
