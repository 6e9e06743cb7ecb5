import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { lineLogger } from './index.js';

function capture(): { lines: Array<{ level: number; component?: string; msg: string }>; log: (line: string) => void } {
  const lines: Array<{ level: number; component?: string; msg: string }> = [];
  const sink = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  return { lines, log: lineLogger(pino({ level: 'info' }, sink)) };
}

describe('lineLogger', () => {
  it('a line marked `part: warn:` is a warning without the marker; failure words warn; the rest is info', () => {
    const { lines, log } = capture();
    log('gateway: warn: integrity: eth/mainnet: upstream https://node.example:443 demoted for 60 s');
    log('watch: scanner for eth failed: boom');
    log('serve: listening');
    expect(lines.map((l) => [l.level, l.component, l.msg])).toEqual([
      [40, 'gateway', 'integrity: eth/mainnet: upstream https://node.example:443 demoted for 60 s'],
      [40, 'watch', 'scanner for eth failed: boom'],
      [30, 'serve', 'listening'],
    ]);
  });
});
