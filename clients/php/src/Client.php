<?php

declare(strict_types=1);

namespace Rpcctl;

use Rpcctl\Exception\ApiException;
use Rpcctl\Exception\ConfigException;
use Rpcctl\Exception\NetworkException;

/**
 * A client of the rpcctl Public API that signs every request.
 *
 * Arguments left null come from the environment: PUBLIC_API_KEY, PUBLIC_API_SECRET and
 * PUBLIC_API_BASE (default http://127.0.0.1:8080). A 429 is retried after its Retry-After
 * (up to `$maxRetryAfter` seconds); GET, PUT and DELETE are also retried on connection errors;
 * both at most `$maxRetries` times. `$timeout` (seconds) bounds each attempt.
 *
 * The service takes each signature of a mutating request once. The client sends an identical
 * request again (a retry, or your code repeating the same body) with the next second's
 * signature, waiting for that second, and re-signs once more when the service answers
 * `401 Invalid signature.` with `X-Rpcctl-Reason: replayed` because another process sent
 * those bytes in that second.
 *
 * @phpstan-type Plan array{id: int, slug: string, name: string, included_credits: int, rps_limit: int, endpoints_limit: int, webhook_address_slots: int}
 * @phpstan-type Endpoint array{id: int, uuid: string, name: string, status: 'active'|'paused', network_id: int, network_name: string, network_slug: string, network_environment_id: int, env_slug: string, url: string, rps_limit: int, plan_id: int, created_at: string, version: ?string, block_height: ?int, allowed_ips: list<string>}
 * @phpstan-type Usage array{days: int, total_requests: int, total_credits: int, series: list<array{date: string, requests: int, credits: int}>, methods: list<array{method: string, requests: int, credits: int}>}
 */
final class Client
{
    public const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
    private const IDEMPOTENT = ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'];
    /** Methods whose signature the service accepts more than once. */
    private const REPLAYABLE = ['GET', 'HEAD', 'OPTIONS'];

    public readonly string $apiKey;
    public readonly string $baseUrl;
    /** The Address Watch routes. */
    public readonly AddressWatch $addressWatch;
    /** The payment order routes. */
    public readonly Payments $payments;
    /** The refund routes of payment orders. */
    public readonly Refunds $refunds;
    /** The payout routes (a refund's rf_ id works there too). */
    public readonly Payouts $payouts;
    private readonly string $secret;
    /** @var callable(float): void */
    private $sleep;
    /** @var callable(): float */
    private $clock;
    private int $sentSecond = 0;
    /** @var array<string, true> mutating signatures sent in $sentSecond */
    private array $sent = [];

    /**
     * @param (callable(float): void)|null $sleep replaces the wait between retries (tests)
     * @param (callable(): float)|null $clock replaces microtime(true) (tests)
     * @throws ConfigException
     */
    public function __construct(
        ?string $apiKey = null,
        #[\SensitiveParameter] ?string $secret = null,
        ?string $baseUrl = null,
        private readonly float $timeout = 30.0,
        private readonly int $maxRetries = 3,
        private readonly int $maxRetryAfter = 30,
        private readonly string $userAgent = 'rpcctl-php/0.1.0',
        ?callable $sleep = null,
        ?callable $clock = null,
    ) {
        $this->apiKey = $apiKey ?: self::env('PUBLIC_API_KEY') ?? '';
        $this->secret = $secret ?: self::env('PUBLIC_API_SECRET') ?? '';
        $this->baseUrl = rtrim($baseUrl ?: self::env('PUBLIC_API_BASE') ?? self::DEFAULT_BASE_URL, '/');
        if ($this->apiKey === '') {
            throw new ConfigException('API key is required: pass $apiKey or set PUBLIC_API_KEY');
        }
        if ($this->secret === '') {
            throw new ConfigException('API secret is required: pass $secret or set PUBLIC_API_SECRET');
        }
        $scheme = parse_url($this->baseUrl, PHP_URL_SCHEME);
        if (!in_array($scheme, ['http', 'https'], true) || parse_url($this->baseUrl, PHP_URL_HOST) === null) {
            throw new ConfigException(sprintf('base URL must be http(s)://host...: "%s"', $this->baseUrl));
        }
        $this->sleep = $sleep ?? static function (float $seconds): void {
            usleep((int) ($seconds * 1_000_000));
        };
        $this->clock = $clock ?? static fn (): float => microtime(true);
        $this->addressWatch = new AddressWatch($this);
        $this->payments = new Payments($this);
        $this->refunds = new Refunds($this);
        $this->payouts = new Payouts($this);
    }

    /** The secret never shows in var_dump() or print_r(). */
    public function __debugInfo(): array
    {
        return ['baseUrl' => $this->baseUrl, 'apiKey' => $this->apiKey];
    }

    private static function env(string $name): ?string
    {
        $value = getenv($name);
        return $value === false || $value === '' ? null : $value;
    }

    /**
     * Sends any signed request and returns the decoded JSON body of a 2xx answer.
     *
     * A string `$body` is sent and signed exactly as given; any other non-null value is
     * JSON-encoded once and those bytes are signed and sent.
     *
     * @param array<string, string|int|bool|null> $query null values are left out
     * @return array<string, mixed>
     * @throws ApiException on a non-2xx answer
     * @throws NetworkException when no answer came
     */
    public function request(string $method, string $path, array $query = [], mixed $body = null): array
    {
        $method = strtoupper($method);
        $data = match (true) {
            $body === null => '',
            is_string($body) => $body,
            default => json_encode($body, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR),
        };
        if (!str_starts_with($path, '/')) {
            $path = '/' . $path;
        }
        $query = array_map(static fn ($v) => is_bool($v) ? ($v ? 'true' : 'false') : $v, array_filter($query, static fn ($v) => $v !== null));
        $url = $this->baseUrl . $path . ($query ? (str_contains($path, '?') ? '&' : '?') . http_build_query($query, '', '&', PHP_QUERY_RFC3986) : '');
        $signedPath = (string) parse_url($url, PHP_URL_PATH);

        $resigned = false;
        for ($attempt = 0; ; $attempt++) {
            $headers = ['Accept: application/json', 'User-Agent: ' . $this->userAgent, 'Expect:'];
            foreach ($this->sign($method, $signedPath, $data) as $name => $value) {
                $headers[] = $name . ': ' . $value;
            }
            if ($data !== '') {
                $headers[] = 'Content-Type: application/json';
            }
            [$status, $responseHeaders, $text, $error] = $this->send($method, $url, $headers, $data);
            if ($error !== null) {
                if (in_array($method, self::IDEMPOTENT, true) && $attempt < $this->maxRetries) {
                    ($this->sleep)(self::backoff($attempt));
                    continue;
                }
                throw new NetworkException(sprintf('cannot reach %s: %s', $this->baseUrl, $error));
            }
            $decoded = $text === '' ? null : json_decode($text, true);
            $reason = $responseHeaders['x-rpcctl-reason'] ?? null;
            if ($status === 401 && !$resigned && !in_array($method, self::REPLAYABLE, true) && $reason === 'replayed') {
                // Another process may have sent these very bytes in this second (a wrong signature says bad_signature).
                $resigned = true;
                $attempt--;
                ($this->sleep)(self::toNextSecond(($this->clock)()));
                continue;
            }
            $retryAfter = self::retryAfter($responseHeaders['retry-after'] ?? null);
            if ($status === 429 && $attempt < $this->maxRetries) {
                $wait = $retryAfter ?? 1;
                if ($wait <= $this->maxRetryAfter) {
                    ($this->sleep)((float) $wait);
                    continue;
                }
            }
            if ($status >= 200 && $status < 300) {
                return is_array($decoded) ? $decoded : [];
            }
            $message = is_array($decoded) && is_string($decoded['error'] ?? null)
                ? $decoded['error']
                : sprintf('HTTP %d%s', $status, $text === '' ? '' : ': ' . substr($text, 0, 200));
            throw new ApiException($status, $message, $decoded ?? $text, $retryAfter, $reason);
        }
    }

    /** @return array{X-Api-Key: string, X-Timestamp: string, X-Signature: string} */
    private function sign(string $method, string $path, string $data): array
    {
        $now = ($this->clock)();
        $headers = Signing::headers($this->apiKey, $this->secret, $method, $path, $data, (int) floor($now));
        if (!in_array($method, self::REPLAYABLE, true) && $this->sentThisSecond($headers['X-Signature'], $now)) {
            ($this->sleep)(self::toNextSecond($now));
            $now = ($this->clock)();
            $headers = Signing::headers($this->apiKey, $this->secret, $method, $path, $data, (int) floor($now));
            $this->sentThisSecond($headers['X-Signature'], $now);
        }
        return $headers;
    }

    /** Records a mutating signature; true when it was already sent in this second. */
    private function sentThisSecond(string $signature, float $now): bool
    {
        $second = (int) floor($now);
        if ($second !== $this->sentSecond) {
            $this->sentSecond = $second;
            $this->sent = [];
        }
        if (isset($this->sent[$signature])) {
            return true;
        }
        $this->sent[$signature] = true;
        return false;
    }

    /** A few milliseconds past the next second's boundary, so the new timestamp is surely later. */
    private static function toNextSecond(float $now): float
    {
        return 1.0 - fmod($now, 1.0) + 0.005;
    }

    /**
     * @param list<string> $headers
     * @return array{int, array<string, string>, string, ?string}
     */
    private function send(string $method, string $url, array $headers, string $data): array
    {
        $responseHeaders = [];
        $curl = curl_init($url);
        curl_setopt_array($curl, [
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $headers,
            CURLOPT_RETURNTRANSFER => true,
            // A redirect would resend the signed request elsewhere; report the 3xx instead.
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_TIMEOUT_MS => (int) ($this->timeout * 1000),
            CURLOPT_CONNECTTIMEOUT_MS => (int) (min($this->timeout, 10.0) * 1000),
            CURLOPT_HEADERFUNCTION => static function ($curl, string $line) use (&$responseHeaders): int {
                $parts = explode(':', $line, 2);
                if (count($parts) === 2) {
                    $responseHeaders[strtolower(trim($parts[0]))] = trim($parts[1]);
                }
                return strlen($line);
            },
        ]);
        if ($data !== '') {
            curl_setopt($curl, CURLOPT_POSTFIELDS, $data);
        }
        $text = curl_exec($curl);
        $error = $text === false ? (curl_error($curl) ?: 'cURL error ' . curl_errno($curl)) : null;
        $status = (int) curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
        curl_close($curl);
        return [$status, $responseHeaders, $text === false ? '' : (string) $text, $error];
    }

    private static function retryAfter(?string $value): ?int
    {
        if ($value === null || $value === '') {
            return null;
        }
        if (is_numeric($value) && (float) $value >= 0) {
            return max(1, (int) ceil((float) $value));
        }
        $when = strtotime($value);
        return $when === false ? null : max(1, $when - time());
    }

    private static function backoff(int $attempt): float
    {
        return min(2.0, 0.2 * 2 ** $attempt) * (0.8 + mt_rand() / mt_getrandmax() * 0.4);
    }

    /** @param 7|30|90|null $days */
    private static function days(?int $days): array
    {
        return ['days' => $days];
    }

    /**
     * GET /v1/account: the plan and this month's usage.
     *
     * @return array{ok: true, user_id: int, plan: Plan|null, usage: array{period: string, requests: int, credits_used: int, credits_included: int, credits_remaining: int}}
     */
    public function account(): array
    {
        return $this->request('GET', '/v1/account');
    }

    /**
     * GET /v1/account/usage: daily usage over all endpoints.
     *
     * @param 7|30|90|null $days
     * @return array{ok: true, usage: Usage}
     */
    public function accountUsage(?int $days = null): array
    {
        return $this->request('GET', '/v1/account/usage', self::days($days));
    }

    /**
     * GET /v1/endpoints.
     *
     * @return array{ok: true, endpoints: list<Endpoint>}
     */
    public function listEndpoints(): array
    {
        return $this->request('GET', '/v1/endpoints');
    }

    /**
     * GET /v1/endpoints/available-networks: what the plan can create endpoints on.
     *
     * @return array{ok: true, networks: list<array{id: int, uuid: string, name: string, slug: string, sort: int, environment_kinds: list<string>}>, network_limit: ?int, allowed_network_slugs: list<string>}
     */
    public function availableNetworks(): array
    {
        return $this->request('GET', '/v1/endpoints/available-networks');
    }

    /**
     * POST /v1/endpoints: give `$networkEnvironmentId`, or `$networkId` with `$envSlug`.
     *
     * @return array{ok: true, endpoint: Endpoint}
     */
    public function createEndpoint(string $name, ?int $networkEnvironmentId = null, ?int $networkId = null, ?string $envSlug = null): array
    {
        $body = array_filter(
            ['name' => $name, 'network_environment_id' => $networkEnvironmentId, 'network_id' => $networkId, 'env_slug' => $envSlug],
            static fn ($v) => $v !== null,
        );
        return $this->request('POST', '/v1/endpoints', [], $body);
    }

    /**
     * GET /v1/endpoints/{id}.
     *
     * @return array{ok: true, endpoint: Endpoint}
     */
    public function getEndpoint(int $id): array
    {
        return $this->request('GET', '/v1/endpoints/' . $id);
    }

    /**
     * PATCH /v1/endpoints/{id}: renames an endpoint (names need not be unique).
     *
     * @return array{ok: true, endpoint: Endpoint}
     */
    public function renameEndpoint(int $id, string $name): array
    {
        return $this->request('PATCH', '/v1/endpoints/' . $id, [], ['name' => $name]);
    }

    /**
     * PATCH /v1/endpoints/{id}/status: 'paused' stops its traffic, 'active' resumes it.
     *
     * @param 'active'|'paused' $status
     * @return array{ok: true, endpoint: Endpoint}
     */
    public function setEndpointStatus(int $id, string $status): array
    {
        return $this->request('PATCH', '/v1/endpoints/' . $id . '/status', [], ['status' => $status]);
    }

    /**
     * PATCH /v1/endpoints/{id}/allowed-ips: replaces the allowlist; [] allows every IP.
     *
     * @param list<string> $allowedIps
     * @return array{ok: true, endpoint: Endpoint}
     */
    public function setAllowedIps(int $id, array $allowedIps): array
    {
        return $this->request('PATCH', '/v1/endpoints/' . $id . '/allowed-ips', [], ['allowed_ips' => array_values($allowedIps)]);
    }

    /**
     * GET /v1/endpoints/usage: usage over all endpoints.
     *
     * @param 7|30|90|null $days
     * @return array{ok: true, usage: Usage}
     */
    public function endpointsUsage(?int $days = null): array
    {
        return $this->request('GET', '/v1/endpoints/usage', self::days($days));
    }

    /**
     * GET /v1/endpoints/{id}/usage: usage of one endpoint.
     *
     * @param 7|30|90|null $days
     * @return array{ok: true, usage: Usage}
     */
    public function endpointUsage(int $id, ?int $days = null): array
    {
        return $this->request('GET', '/v1/endpoints/' . $id . '/usage', self::days($days));
    }
}
