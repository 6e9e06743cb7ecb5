<?php

declare(strict_types=1);

namespace Rpcctl\Exception;

/**
 * The API answered with a non-2xx status.
 */
final class ApiException extends RpcctlException
{
    /**
     * @param int $status HTTP status
     * @param string $error the API's `error` string, or a summary of the body when it has none
     * @param mixed $body the decoded JSON body, or the raw text
     * @param int|null $retryAfter the Retry-After header in seconds
     * @param string|null $reason the X-Rpcctl-Reason header of an authentication failure (`replayed`, `bad_signature`, ...)
     */
    public function __construct(
        public readonly int $status,
        public readonly string $error,
        public readonly mixed $body = null,
        public readonly ?int $retryAfter = null,
        public readonly ?string $reason = null,
    ) {
        parent::__construct(sprintf('HTTP %d: %s', $status, $error), $status);
    }

    /**
     * The kind of failure, as in the other rpcctl libraries: E_NOT_FOUND (404), E_VALIDATION
     * (400), E_RATE_LIMIT (429), E_AUTH (401, 403), E_REPLAYED (a 401 for a signed request
     * sent twice), else E_API.
     */
    public function getErrorCode(): string
    {
        return match (true) {
            $this->reason === 'replayed' => 'E_REPLAYED',
            $this->status === 401, $this->status === 403 => 'E_AUTH',
            $this->status === 404 => 'E_NOT_FOUND',
            $this->status === 400 => 'E_VALIDATION',
            $this->status === 429 => 'E_RATE_LIMIT',
            default => 'E_API',
        };
    }
}
