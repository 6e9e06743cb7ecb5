// npm run completions — regenerates completions/ from the command tree (test/cli-completion
// fails while they are stale). Needs a build: the npm script runs one first.
import { writeFileSync } from 'node:fs';
import { buildProgram } from '../dist/cli/program.js';
import { completionScript } from '../dist/cli/completion/run.js';
import { processIO } from '../dist/cli/io.js';

const FILES = { bash: 'rpcctl.bash', zsh: '_rpcctl', fish: 'rpcctl.fish' };

const program = await buildProgram(processIO());
for (const [shell, file] of Object.entries(FILES)) {
  const path = new URL(`../completions/${file}`, import.meta.url);
  writeFileSync(path, completionScript(program, shell));
  console.log(`wrote completions/${file}`);
}
