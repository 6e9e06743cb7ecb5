<?php

declare(strict_types=1);

namespace Rpcctl\Exception;

/**
 * The request got no HTTP answer: refused, reset or timed out.
 */
final class NetworkException extends RpcctlException
{
    public function getErrorCode(): string
    {
        return 'E_NETWORK';
    }
}
