import type { Readable, Writable } from 'node:stream';

export type OutStream = Writable & { isTTY?: boolean; columns?: number };
export type InStream = Readable & { isTTY?: boolean };

export interface Choice<T> {
  name: string;
  value: T;
  description?: string;
}

/** The questions commands may ask. Tests inject scripted answers through `CliIO.prompter`. */
export interface Prompter {
  input(q: { message: string; default?: string; validate?: (value: string) => true | string }): Promise<string>;
  password(q: { message: string; validate?: (value: string) => true | string }): Promise<string>;
  confirm(q: { message: string; default?: boolean }): Promise<boolean>;
  select<T>(q: { message: string; choices: Array<Choice<T>>; default?: T }): Promise<T>;
}

/** The streams and environment a command runs against; tests inject their own. */
export interface CliIO {
  stdout: OutStream;
  stderr: OutStream;
  stdin: InStream;
  env: NodeJS.ProcessEnv;
  /** Answers to questions; unset means real prompts on the terminal. */
  prompter?: Prompter;
  /** Ends long-running commands (`events --follow`, `webhook listen`); unset means SIGINT/SIGTERM. */
  interrupt?: AbortSignal;
}

/** 130: ended by Ctrl-C (128 + SIGINT), what a shell reports for an interrupted command. */
export const EXIT = { ok: 0, error: 1, usage: 2, auth: 4, interrupted: 130 } as const;

/** A failure to report on stderr with the given exit code; no stack trace. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.error) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

export const usageError = (message: string) => new CliError(message, EXIT.usage);

export function processIO(): CliIO {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // On first use: Node builds process.stdin (a socket, when it is a pipe) the first time it is
    // read, and most commands never read it.
    get stdin() { return process.stdin; },
    env: process.env,
  };
}

/**
 * `--jq` runs asynchronously (WebAssembly); printing stays a plain call for commands, and the
 * filtered text is written in order through this per-invocation queue, which `run` drains.
 */
export const pendingOutput = new WeakMap<CliIO, Promise<void>>();

/** Waits for every `--jq` output of this invocation; rejects with the first jq error. */
export function flushOutput(io: CliIO): Promise<void> {
  return pendingOutput.get(io) ?? Promise.resolve();
}
