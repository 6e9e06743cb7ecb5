<?php

declare(strict_types=1);

namespace Rpcctl\Tests;

/** Assertions that throw, independent of the zend.assertions ini setting. */
final class Assert
{
    public static function same(mixed $expected, mixed $actual, string $what = ''): void
    {
        if ($expected !== $actual) {
            throw new \AssertionError(sprintf('%sexpected %s, got %s', $what === '' ? '' : "$what: ", var_export($expected, true), var_export($actual, true)));
        }
    }

    public static function true(bool $condition, string $what): void
    {
        if (!$condition) {
            throw new \AssertionError($what);
        }
    }

    /**
     * @template T of \Throwable
     * @param class-string<T> $class
     * @return T
     */
    public static function throws(string $class, callable $fn): \Throwable
    {
        try {
            $fn();
        } catch (\Throwable $e) {
            if ($e instanceof $class) {
                return $e;
            }
            throw new \AssertionError(sprintf('expected %s, got %s: %s', $class, get_class($e), $e->getMessage()));
        }
        throw new \AssertionError("expected $class, nothing was thrown");
    }

    /** @return list<array<string, mixed>> */
    public static function vectors(string $name): array
    {
        // The repository's vectors live in test/fixtures at its root.
        $path = __DIR__ . '/../../../test/fixtures/' . $name;
        return json_decode((string) file_get_contents($path), true, 512, JSON_THROW_ON_ERROR)['cases'];
    }
}
