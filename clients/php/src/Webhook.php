<?php

declare(strict_types=1);

namespace Rpcctl;

use Rpcctl\Exception\WebhookVerificationException;

/**
 * Verification of the service's outbound webhooks: `X-Signature` is the lowercase hex
 * HMAC-SHA256 of `"{X-Timestamp}.{raw body}"`, keyed with the account's webhook secret.
 */
final class Webhook
{
    public const DEFAULT_TOLERANCE = 300;

    /** The X-Signature the service sends for this timestamp and body. */
    public static function sign(string $secret, int|string $timestamp, string $body): string
    {
        return hash_hmac('sha256', $timestamp . '.' . $body, $secret);
    }

    /**
     * Throws unless the delivery is authentic and its timestamp is within `$tolerance` seconds
     * of now (0 disables the freshness check). `$body` is the raw request body.
     *
     * @throws WebhookVerificationException
     */
    public static function verify(string $secret, ?string $timestamp, ?string $signature, string $body, int $tolerance = self::DEFAULT_TOLERANCE, ?int $now = null): void
    {
        if ($signature === null || $signature === '') {
            throw new WebhookVerificationException('missing X-Signature');
        }
        if ($timestamp === null || preg_match('/^[0-9]+$/D', $timestamp) !== 1) {
            throw new WebhookVerificationException('missing or invalid X-Timestamp');
        }
        if ($tolerance > 0 && abs(($now ?? time()) - (int) $timestamp) > $tolerance) {
            throw new WebhookVerificationException('timestamp outside tolerance');
        }
        if (!hash_equals(self::sign($secret, $timestamp, $body), strtolower(trim($signature)))) {
            throw new WebhookVerificationException('signature mismatch');
        }
    }

    /**
     * Verifies a delivery and returns its flat JSON body as an array.
     *
     * @param array<string, string|string[]> $headers request headers; names match case-insensitively
     * @return array<string, mixed>
     * @throws WebhookVerificationException
     */
    public static function constructEvent(string $body, array $headers, string $secret, int $tolerance = self::DEFAULT_TOLERANCE, ?int $now = null): array
    {
        self::verify($secret, self::header($headers, 'X-Timestamp'), self::header($headers, 'X-Signature'), $body, $tolerance, $now);
        try {
            $event = json_decode($body, true, 512, JSON_THROW_ON_ERROR);
        } catch (\JsonException $e) {
            throw new WebhookVerificationException('body is not JSON: ' . $e->getMessage());
        }
        if (!is_array($event) || array_is_list($event)) {
            throw new WebhookVerificationException('body is not a JSON object');
        }
        return $event;
    }

    /**
     * Verifies the request being served (php://input and the X-Timestamp / X-Signature headers).
     *
     * @return array<string, mixed>
     * @throws WebhookVerificationException
     */
    public static function fromGlobals(string $secret, int $tolerance = self::DEFAULT_TOLERANCE): array
    {
        $headers = [
            'X-Timestamp' => $_SERVER['HTTP_X_TIMESTAMP'] ?? '',
            'X-Signature' => $_SERVER['HTTP_X_SIGNATURE'] ?? '',
        ];
        return self::constructEvent((string) file_get_contents('php://input'), $headers, $secret, $tolerance);
    }

    /** @param array<string, string|string[]> $headers */
    private static function header(array $headers, string $name): ?string
    {
        foreach ($headers as $key => $value) {
            if (strcasecmp((string) $key, $name) === 0) {
                return is_array($value) ? (isset($value[0]) ? (string) $value[0] : null) : (string) $value;
            }
        }
        return null;
    }
}
