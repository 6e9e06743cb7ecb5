import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, toolchain } from './helpers/clients.js';
import { describeClientLibrary } from './helpers/client-suite.js';

const dir = join(repoRoot, 'clients/python');
// Installed the way the README says (`pip install`) would put the package on sys.path; PYTHONPATH does the same here without a network.
const env = { PYTHONPATH: dir, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' };

describeClientLibrary({
  name: 'Python',
  dir: 'python',
  toolchain: toolchain('python3', ['--version'], 'python3'),
  fence: 'python',
  unitPassed: [/test_reproduces_every_case \(tests\.test_signing\.[\w.]+\) \.\.\. ok/, /test_reproduces_every_case \(tests\.test_webhooks\.[\w.]+\) \.\.\. ok/],
  unit: () => ({ cmd: 'python3', args: ['-m', 'unittest', 'discover', '-v', '-s', 'tests', '-t', '.'], cwd: dir, env }),
  integration: () => ({ cmd: 'python3', args: ['tests/integration.py'], cwd: dir, env }),
  // Into a virtualenv, as a reader would: the package's in-tree build backend needs no PyPI.
  install: {
    toolchain: toolchain('python3', ['-c', 'import venv, ensurepip'], 'python3-venv', 'python3 with venv and ensurepip'),
    script: (lines) => [
      'python3 -m venv venv', '. venv/bin/activate', ...lines.map((l) => `${l} --quiet --disable-pip-version-check`),
      'cd /', 'python -c "import rpcctl, sys; assert rpcctl.__file__.startswith(sys.prefix), rpcctl.__file__; rpcctl.Client; print(\'rpcctl client installed\')"',
    ].join('\n'),
    env: { PYTHONDONTWRITEBYTECODE: '1' },
  },
  example(code, index, work, _kind) {
    const file = join(work, `example_${index}.py`);
    writeFileSync(file, code);
    return { cmd: 'python3', args: [file], cwd: work, env };
  },
});
