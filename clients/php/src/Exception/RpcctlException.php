<?php

declare(strict_types=1);

namespace Rpcctl\Exception;

/**
 * Base class of every exception this library throws. `getErrorCode()` is stable for programs.
 */
class RpcctlException extends \RuntimeException
{
    public function getErrorCode(): string
    {
        return 'E_CLIENT';
    }
}
