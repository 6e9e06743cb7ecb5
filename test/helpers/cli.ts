import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { run } from '../../src/cli/program.js';
import type { CliIO } from '../../src/cli/io.js';
import type { Choice, Prompter } from '../../src/cli/prompts.js';
import { storeUrlOf } from './service.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  env?: Record<string, string | undefined>;
  /** Both stdin and stdout look like a terminal (columns: 100). Default: piped. */
  tty?: boolean;
  columns?: number;
  stdin?: string;
  prompter?: Prompter;
}

function sink(tty: boolean, columns: number): { stream: Writable & { isTTY?: boolean; columns?: number }; text: () => string } {
  let text = '';
  const stream = new Writable({ write(chunk, _enc, cb) { text += chunk.toString(); cb(); } }) as Writable & { isTTY?: boolean; columns?: number };
  if (tty) {
    stream.isTTY = true;
    stream.columns = columns;
  }
  return { stream, text: () => text };
}

/** A fresh, empty config dir, so no test sees another's profiles (or the user's). */
export const tempConfigDir = () => mkdtempSync(join(tmpdir(), 'rpcctl-cfg-'));

/** Runs `rpcctl ...args` in-process with injected streams; never touches the real env. */
export async function cli(args: string[], opts: CliRunOptions = {}): Promise<CliRun> {
  return cliStarted(args, opts).done;
}

/** A command that runs until interrupted (`events --follow`, `webhook listen`), watched while it runs. */
export interface RunningCli {
  stdout(): string;
  stderr(): string;
  /** Resolves once `re` matches the output so far (stdout, or stderr), or rejects after `ms`. */
  waitFor(re: RegExp, stream?: 'stdout' | 'stderr', ms?: number): Promise<RegExpExecArray>;
  /** What Ctrl-C does: aborts the command's interrupt signal; resolves with the finished run. */
  interrupt(): Promise<CliRun>;
  done: Promise<CliRun>;
}

export function cliStarted(args: string[], opts: CliRunOptions = {}): RunningCli {
  const tty = opts.tty ?? false;
  const out = sink(tty, opts.columns ?? 100);
  const err = sink(tty, opts.columns ?? 100);
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  if (tty) stdin.isTTY = true;
  stdin.end(opts.stdin ?? '');
  const env: NodeJS.ProcessEnv = { HOME: tempConfigDir(), PATH: process.env.PATH };
  for (const [k, v] of Object.entries(opts.env ?? {})) if (v !== undefined) env[k] = v;
  // `rpcctl admin --data-dir D` on a test service's data dir: in the PostgreSQL pass that
  // service's store is a schema of its own, which admin finds as serve does, by the URL.
  const dataDir = args[0] === 'admin' ? args[args.indexOf('--data-dir') + 1] : undefined;
  const storeUrl = dataDir && args.includes('--data-dir') ? storeUrlOf(dataDir) : undefined;
  if (storeUrl && env.RPCCTL_DATABASE_URL === undefined) env.RPCCTL_DATABASE_URL = storeUrl;
  const controller = new AbortController();
  const io: CliIO = { stdout: out.stream, stderr: err.stream, stdin, env, prompter: opts.prompter, interrupt: controller.signal };
  let finished = false;
  const done = run(args, io).then((code) => {
    finished = true;
    return { code, stdout: out.text(), stderr: err.text() };
  });
  return {
    stdout: out.text,
    stderr: err.text,
    async waitFor(re, stream = 'stdout', ms = 15_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const m = re.exec(stream === 'stdout' ? out.text() : err.text());
        if (m) return m;
        if (finished) throw new Error(`command ended before ${re} showed; stdout:\n${out.text()}\nstderr:\n${err.text()}`);
        if (Date.now() > deadline) throw new Error(`${re} not seen within ${ms} ms; stdout:\n${out.text()}\nstderr:\n${err.text()}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    interrupt() {
      controller.abort();
      return done;
    },
    done,
  };
}

/** Scripted answers, checked against the questions in order; records what was asked. */
export function scriptedPrompter(answers: Array<{ match: RegExp; answer: unknown }>): Prompter & { asked: string[] } {
  const asked: string[] = [];
  // An empty string answer takes the question's default, as pressing Enter does.
  const next = (message: string, validate?: (v: string) => true | string, fallback?: string) => {
    asked.push(message);
    const step = answers.shift();
    if (!step) throw new Error(`unexpected question: ${message}`);
    if (!step.match.test(message)) throw new Error(`asked "${message}", expected ${step.match}`);
    const answer = step.answer === '' && fallback !== undefined ? fallback : step.answer;
    if (validate && typeof answer === 'string') {
      const verdict = validate(answer);
      if (verdict !== true) throw new Error(`answer to "${message}" rejected: ${verdict}`);
    }
    return answer;
  };
  return {
    asked,
    input: async (q) => next(q.message, q.validate, q.default) as string,
    password: async (q) => next(q.message, q.validate) as string,
    confirm: async (q) => next(q.message) as boolean,
    select: async <T>(q: { message: string; choices: Array<Choice<T>> }) => {
      const want = next(q.message) as string;
      const choice = q.choices.find((c) => c.name.includes(want));
      if (!choice) throw new Error(`no choice matching "${want}" in ${q.choices.map((c) => c.name).join(', ')}`);
      return choice.value;
    },
  };
}

/**
 * Runs a command against the real prompts on a terminal-like stdin/stdout: each time the
 * output since the last answer matches `when`, the `keys` are typed (`\r` is Enter).
 */
export async function cliOnTerminal(args: string[], steps: Array<{ when: RegExp; keys: string }>, env: Record<string, string> = {}): Promise<CliRun & { screen: string }> {
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  stdin.isTTY = true;
  let screen = '';
  let since = 0;
  const pending = [...steps];
  // Like a TTY: the bytes are on the screen at once, the write callback comes a tick later.
  const stdout = new Writable() as Writable & { isTTY?: boolean; columns?: number };
  stdout.write = ((chunk: unknown, encoding?: unknown, cb?: unknown) => {
    screen += String(chunk);
    const step = pending[0];
    if (step && step.when.test(screen.slice(since))) {
      pending.shift();
      since = screen.length;
      setTimeout(() => stdin.write(step.keys), 10);
    }
    const done = typeof encoding === 'function' ? encoding : cb;
    if (typeof done === 'function') setImmediate(done as () => void);
    return true;
  }) as typeof stdout.write;
  stdout.isTTY = true;
  stdout.columns = 100;
  // stderr shows on the same screen, in the order written.
  let errText = '';
  const err = {
    stream: new Writable({ write(chunk, _enc, cb) { errText += chunk.toString(); screen += chunk.toString(); cb(); } }),
    text: () => errText,
  };
  const code = await run(args, { stdin, stdout, stderr: err.stream, env: { HOME: tempConfigDir(), NO_COLOR: '1', ...env } });
  if (pending.length) throw new Error(`prompts never showed ${pending.map((s) => s.when).join(', ')}; screen:\n${screen}`);
  return { code, stdout: screen, stderr: err.text(), screen };
}
