<?php

declare(strict_types=1);

namespace Rpcctl\Exception;

/**
 * A required setting (key, secret, base URL) is missing or malformed.
 */
final class ConfigException extends RpcctlException
{
    public function getErrorCode(): string
    {
        return 'E_CONFIG';
    }
}
