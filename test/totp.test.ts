import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { secretToBase32, totp } from '../src/cabinet/totp.js';

// TOTP against an implementation we did not write (RFC vectors: src/cabinet/totp.test.ts).

describe('against oathtool (Debian oath-toolkit)', () => {
  const oathtool = (() => {
    try {
      return execFileSync('sh', ['-c', 'command -v oathtool'], { encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  })();
  if (!oathtool) throw new Error('oathtool is not installed: apt-get install oathtool (.ci/run does)');

  it('the same codes for random secrets at random times', () => {
    for (let i = 0; i < 25; i++) {
      const secret = randomBytes(20);
      const seconds = Math.floor(Math.random() * 4_000_000_000);
      const now = new Date(seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
      const theirs = execFileSync(oathtool, ['--totp', '-b', '-N', now, secretToBase32(secret)], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', TZ: 'UTC' } }).trim();
      expect(totp(secret, seconds * 1000), `${secretToBase32(secret)} at ${now}`).toBe(theirs);
    }
  });
});
