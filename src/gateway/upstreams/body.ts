import { Readable } from 'node:stream';

/** An answer's body as a stream, for the callers that read it so (the cache, probes, WebSocket). */
export class UpstreamBody extends Readable {
  readonly #resume: () => void;
  readonly #abort: (err: Error) => void;
  constructor(resume: () => void, abort: (err: Error) => void) {
    super();
    this.#resume = resume;
    this.#abort = abort;
  }
  override _read(): void {
    this.#resume();
  }
  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    if (!this.readableEnded) this.#abort(err ?? new Error('upstream answer cancelled'));
    cb(err);
  }
  async text(): Promise<string> {
    const parts: Buffer[] = [];
    for await (const chunk of this) parts.push(chunk as Buffer);
    return Buffer.concat(parts).toString('utf8');
  }
}

/**
 * Upstream answers up to this size are gathered and passed on whole (relay.ts: one `res.end(buf)`
 * with a Content-Length); larger ones are streamed. Most JSON-RPC answers are a few hundred
 * bytes, and at this size the streaming machinery's fixed cost no longer matters next to the copying.
 */
export const BUFFERED_BYTES = 64 * 1024;
