import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, toolchain } from './helpers/clients.js';
import { describeClientLibrary } from './helpers/client-suite.js';

const dir = join(repoRoot, 'clients/go');
// The build cache lives under the temp dir, so HOME need not be writable; it persists between
// runs to keep recompiles short. No network: the library has no third-party modules.
const goTmp = join(tmpdir(), 'rpcctl-go');
mkdirSync(goTmp, { recursive: true });
const env = {
  GOCACHE: join(goTmp, 'cache'), GOPATH: join(goTmp, 'path'), GOPROXY: 'off', GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local', GOTELEMETRY: 'off',
};

describeClientLibrary({
  name: 'Go',
  dir: 'go',
  toolchain: toolchain('go', ['version'], 'golang-go'),
  fence: 'go',
  unitPassed: [/--- PASS: TestSigningVectors/, /--- PASS: TestWebhookVectors/],
  unit: () => ({ cmd: 'sh', args: ['-c', 'go vet ./... && go test -count=1 -v ./...'], cwd: dir, env }),
  integration: () => ({ cmd: 'go', args: ['run', './internal/integrationtest'], cwd: dir, env }),
  // A fresh module, the README's go mod edit line, and a program that calls the library.
  install: {
    toolchain: { available: true, reason: '' },
    script: (lines) => [
      'go mod init example.com/installed', ...lines,
      `cat > main.go <<'EOF'
package main

import (
\t"fmt"

\trpcctl "github.com/rpcctl/rpcctl/clients/go"
)

func main() {
\tif _, err := rpcctl.NewClient(rpcctl.Options{APIKey: "k", Secret: "s", BaseURL: "http://127.0.0.1:1"}); err != nil {
\t\tpanic(err)
\t}
\tfmt.Println("rpcctl client installed")
}
EOF`,
      'go build -o installed . && ./installed',
    ].join('\n'),
    env,
  },
  // A fresh module that requires the library, as `go get` would, resolved to this checkout.
  example(code, index, work, _kind) {
    writeFileSync(join(work, 'go.mod'), [
      `module example.com/readme${index}`, '', 'go 1.19', '',
      'require github.com/rpcctl/rpcctl/clients/go v0.0.0', '',
      `replace github.com/rpcctl/rpcctl/clients/go => ${dir}`, '',
    ].join('\n'));
    writeFileSync(join(work, 'main.go'), code);
    // Built, then exec'd: `go run` would leave the program running when the receiver is stopped.
    return { cmd: 'sh', args: ['-c', 'go build -o example . && exec ./example'], cwd: work, env };
  },
});
