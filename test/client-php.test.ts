import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, toolchain } from './helpers/clients.js';
import { describeClientLibrary } from './helpers/client-suite.js';

const dir = join(repoRoot, 'clients/php');
const php = toolchain('php', ['-r', 'exit(extension_loaded("curl") && extension_loaded("json") ? 0 : 1);'], 'php-cli php-curl', 'php with the curl and json extensions on PATH');

/** What `composer require rpcctl/rpcctl` leaves for a project: a PSR-4 autoloader of Rpcctl\ (composer.json's mapping). */
function fakeComposerInstall(work: string): void {
  mkdirSync(join(work, 'vendor'), { recursive: true });
  writeFileSync(join(work, 'vendor/autoload.php'), `<?php
spl_autoload_register(static function (string $class): void {
    if (str_starts_with($class, 'Rpcctl\\\\')) {
        $file = ${JSON.stringify(join(dir, 'src'))} . '/' . str_replace('\\\\', '/', substr($class, 7)) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
`);
}

describeClientLibrary({
  name: 'PHP',
  dir: 'php',
  toolchain: php,
  fence: 'php',
  unitPassed: [/^ok +SigningTest › reproduces every signature vector$/m, /^ok +WebhookTest › reproduces every webhook vector$/m],
  unit: () => ({ cmd: 'php', args: ['tests/run.php'], cwd: dir }),
  integration: () => ({ cmd: 'php', args: ['tests/integration.php'], cwd: dir }),
  // A fresh Composer project. Packagist is switched off: this machine has no network, and the
  // path repository must be what satisfies the require.
  install: {
    toolchain: toolchain('composer', ['--version'], 'composer', 'composer on PATH'),
    script: (lines) => [
      'export COMPOSER_HOME="$PWD/.composer-home"', `echo '{}' > composer.json`, 'composer config repo.packagist false', ...lines,
      `php -r 'require "vendor/autoload.php"; new Rpcctl\\Client("k", "s", "http://127.0.0.1:1"); echo "rpcctl client installed\\n";'`,
      `test -L vendor/rpcctl/rpcctl || test -d vendor/rpcctl/rpcctl`,
    ].join('\n'),
    env: { COMPOSER_NO_INTERACTION: '1', COMPOSER_ALLOW_SUPERUSER: '1' },
  },
  example(code, index, work, kind) {
    fakeComposerInstall(work);
    const file = kind === 'receiver' ? 'receiver.php' : `example${index}.php`;
    writeFileSync(join(work, file), code);
    // The receiver runs as the README says: PHP's built-in web server with the file as its router.
    return kind === 'receiver'
      ? { cmd: 'sh', args: ['-c', `exec php -S "127.0.0.1:$PORT" ${file}`], cwd: work }
      : { cmd: 'php', args: [file], cwd: work };
  },
});
