<?php

declare(strict_types=1);

namespace Rpcctl\Exception;

/**
 * A webhook delivery failed verification; `$reason` says why.
 */
final class WebhookVerificationException extends RpcctlException
{
    public function __construct(public readonly string $reason)
    {
        parent::__construct('webhook refused: ' . $reason);
    }

    public function getErrorCode(): string
    {
        return 'E_WEBHOOK_SIGNATURE';
    }
}
