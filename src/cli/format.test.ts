import { describe, expect, it } from 'vitest';
import { formatAmount, localTime, relativeTime, shortHex, units } from './format.js';

describe('values for people', () => {
  it('relative times like gh, local times, ISO kept when unparseable', () => {
    const now = Date.parse('2026-01-31T12:00:00Z');
    expect(relativeTime('2026-01-31T11:59:58Z', now)).toBe('just now');
    expect(relativeTime('2026-01-31T11:59:00Z', now)).toBe('1m ago');
    expect(relativeTime('2026-01-31T09:00:00Z', now)).toBe('3h ago');
    expect(relativeTime('2026-01-29T12:00:00Z', now)).toBe('2d ago');
    expect(relativeTime('2026-01-31T12:00:29Z', now)).toBe('in 29s');
    expect(relativeTime('2025-06-01T12:00:00Z', now)).toBe(localTime('2025-06-01T12:00:00Z').slice(0, 10));
    expect(localTime('2026-01-31T12:00:00Z')).toMatch(/^2026-01-3\d \d\d:00:00$/);
    expect(relativeTime('soon', now)).toBe('soon');
  });

  it('amounts in units with the raw value; tokens and unknown networks raw', () => {
    expect(units(10n ** 18n, 18)).toBe('1');
    expect(units(1500000000000000000n, 18)).toBe('1.5');
    expect(units(5n, 18)).toBe('0.000000000000000005');
    expect(formatAmount({ network: 'eth', amount: '1000000000000000000', token: null })).toBe('1 ETH (1000000000000000000 wei)');
    expect(formatAmount({ network: 'eth-sepolia', amount: '2500000000000000000', token: null }, false)).toBe('2.5 ETH');
    expect(formatAmount({ network: 'stellar', amount: '125000000' })).toBe('12.5 XLM (125000000 stroops)');
    expect(formatAmount({ network: 'solana', amount: '1500000000', token: null })).toBe('1.5 SOL (1500000000 lamports)');
    expect(formatAmount({ network: 'solana-devnet', amount: '5000' }, false)).toBe('0.000005 SOL');
    expect(formatAmount({ network: 'solana', amount: '2500000', token: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' })).toBe('2500000 (raw) of token EPjFWd…Dt1v');
    expect(formatAmount({ network: 'tron-nile', amount: '1000000' })).toBe('1 TRX (1000000 sun)');
    expect(formatAmount({ network: 'bitcoin', amount: '150000000' })).toBe('1.5 BTC (150000000 sat)');
    expect(formatAmount({ network: 'eth', amount: '42', token: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' })).toBe('42 (raw) of token 0xA0b8…eB48');
    expect(formatAmount({ network: 'mychain', amount: '7', token: null })).toBe('7 (raw)');
    expect(shortHex('0x52908400098527886E0F7030069857D2E4169EE7')).toBe('0x5290…9EE7');
  });
});
