<?php

declare(strict_types=1);

/*
 * A plain test runner (PHPUnit needs Packagist, which CI cannot reach): every tests/*Test.php
 * returns an array of test name => closure; a test fails by throwing.
 */

spl_autoload_register(static function (string $class): void {
    $prefix = 'Rpcctl\\';
    if (str_starts_with($class, $prefix)) {
        $file = __DIR__ . '/../src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
require __DIR__ . '/Assert.php';

$files = glob(__DIR__ . '/*Test.php') ?: [];
$failed = 0;
$passed = 0;
foreach ($files as $file) {
    $tests = require $file;
    foreach ($tests as $name => $test) {
        $label = basename($file, '.php') . ' › ' . $name;
        try {
            $test();
            $passed++;
            echo "ok   $label\n";
        } catch (\Throwable $e) {
            $failed++;
            echo "FAIL $label\n     " . get_class($e) . ': ' . $e->getMessage() . "\n     at " . $e->getFile() . ':' . $e->getLine() . "\n";
        }
    }
}
echo sprintf("\n%d passed, %d failed\n", $passed, $failed);
exit($failed === 0 && $passed > 0 ? 0 : 1);
