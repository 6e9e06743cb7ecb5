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
     */
    public function __construct(
        public readonly int $status,
        public readonly string $error,
        public readonly mixed $body = null,
        public readonly ?int $retryAfter = null,
    ) {
        parent::__construct(sprintf('HTTP %d: %s', $status, $error), $status);
    }

    public function getErrorCode(): string
    {
        return match (true) {
            $this->status === 401, $this->status === 403 => 'E_AUTH',
            $this->status === 429 => 'E_RATE_LIMIT',
            default => 'E_API',
        };
    }
}
