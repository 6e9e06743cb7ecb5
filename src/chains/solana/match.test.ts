import { describe, expect, it } from 'vitest';
import type { WatchLookup, WatchRef } from '../family.js';
import { parseSolanaJson } from './chain.js';
import { matchSolanaBlock, type SolanaBlockTx, type SolanaTokenBalance } from './match.js';

const ALICE = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';
const BOB = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const BOB_USDC = 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263';
const ALICE_USDC = 'HN7cABqLq46Es1jh92dQQisAq662SmxELLLsHHe4YWrH';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const OTHER_MINT = 'So11111111111111111111111111111111111111112';
const SYSTEM = '11111111111111111111111111111111';
const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';

function lookup(watched: Record<string, string>): WatchLookup {
  const refs = new Map<string, WatchRef[]>(Object.entries(watched).map(([address, watchId]) => [address, [{ watchId, accountId: 1, network: 'solana', address }]]));
  return { lookup: (envId, key) => (envId === 1 ? refs.get(key) : undefined), size: (envId) => (envId === 1 ? refs.size : 0) };
}

const tb = (accountIndex: number, owner: string, amount: string, mint = USDC): SolanaTokenBalance => ({ accountIndex, mint, owner, uiTokenAmount: { amount, decimals: 6 } });

function tx(sig: string, keys: string[], pre: Array<number | string>, post: Array<number | string>, extra: Partial<NonNullable<SolanaBlockTx['meta']>> = {}): SolanaBlockTx {
  return { transaction: { signatures: [sig], message: { accountKeys: keys } }, meta: { err: null, fee: 5000, preBalances: pre, postBalances: post, ...extra } };
}

describe('Solana blocks matched to watches', () => {
  it('SOL: the receiver a payment of what it gained, the payer a payout of what it sent without the fee', () => {
    const t = tx('sig1', [ALICE, BOB, SYSTEM], [10_000_000_000, 1_000, 1], [8_999_995_000, 1_000_001_000, 1]);
    const hits = matchSolanaBlock(lookup({ [ALICE]: 'wa', [BOB]: 'wb' }), 1, [t], new Set([USDC]));
    expect(hits.map((h) => [h.watch.watchId, h.type, h.direction, h.from, h.to, h.token, h.amount, h.txHash])).toEqual([
      ['wa', 'payout', 'out', ALICE, BOB, null, '1000000000', 'sig1'],
      ['wb', 'payment', 'in', ALICE, BOB, null, '1000000000', 'sig1'],
    ]);
  });

  it('SPL: a transfer into the owner\'s associated token account (created in the same transaction) is the owner\'s; the sender only paid a fee and rent', () => {
    const keys = [ALICE, BOB_USDC, ALICE_USDC, BOB, USDC, TOKEN_PROGRAM];
    const t = tx('sig2', keys, [5_000_000_000, 0, 2_039_280, 0, 1, 1], [4_997_955_720, 2_039_280, 2_039_280, 0, 1, 1], {
      preTokenBalances: [tb(2, ALICE, '5000000')],
      postTokenBalances: [tb(1, BOB, '1250000'), tb(2, ALICE, '3750000')],
    });
    const hits = matchSolanaBlock(lookup({ [ALICE]: 'wa', [BOB]: 'wb' }), 1, [t], new Set([USDC]));
    expect(hits.map((h) => [h.watch.watchId, h.type, h.token, h.amount, h.from, h.to])).toEqual([
      // The rent of Bob's new token account left Alice's wallet: SOL out.
      ['wa', 'payout', null, '2039280', ALICE, BOB_USDC],
      ['wa', 'payout', USDC, '1250000', ALICE, BOB],
      ['wb', 'payment', USDC, '1250000', ALICE, BOB],
    ]);
  });

  it('mints not listed, failed transactions, other environments and unwatched wallets give nothing', () => {
    const keys = [ALICE, BOB_USDC, ALICE_USDC];
    const spl = (mint: string, err: unknown = null) => tx('sig3', keys, [1_000_000, 0, 0], [995_000, 0, 0], {
      err, preTokenBalances: [tb(2, ALICE, '10', mint), tb(1, BOB, '0', mint)], postTokenBalances: [tb(2, ALICE, '0', mint), tb(1, BOB, '10', mint)],
    });
    const reg = lookup({ [BOB]: 'wb' });
    expect(matchSolanaBlock(reg, 1, [spl(OTHER_MINT)], new Set([USDC]))).toEqual([]);
    expect(matchSolanaBlock(reg, 1, [spl(USDC, { InstructionError: [0, 'Custom'] })], new Set([USDC]))).toEqual([]);
    expect(matchSolanaBlock(reg, 2, [spl(USDC)], new Set([USDC]))).toEqual([]);
    expect(matchSolanaBlock(lookup({ [SYSTEM]: 'ws' }), 1, [spl(USDC)], new Set([USDC]))).toEqual([]);
    expect(matchSolanaBlock(reg, 1, [spl(USDC)], new Set([USDC])).map((h) => h.amount)).toEqual(['10']);
  });

  it('v0 transactions: accounts loaded from lookup tables come after the message\'s keys', () => {
    const t = tx('sig4', [ALICE], [1_000_005_000, 7], [0, 1_000_000_007], { loadedAddresses: { writable: [BOB], readonly: [] } });
    expect(matchSolanaBlock(lookup({ [BOB]: 'wb' }), 1, [t], new Set()).map((h) => [h.direction, h.amount, h.from])).toEqual([['in', '1000000000', ALICE]]);
  });

  it('lamports past 2^53 are read exactly from the JSON text', () => {
    const text = '{"meta":{"err":null,"fee":5000,"preBalances":[ 9007199254740993,0 ],"postBalances":[9007199254740993, 18014398509481985]}}';
    const parsed = parseSolanaJson(text) as { meta: { preBalances: string[]; postBalances: string[] } };
    expect(parsed.meta.preBalances).toEqual(['9007199254740993', '0']);
    expect(parsed.meta.postBalances).toEqual(['9007199254740993', '18014398509481985']);
    const t = tx('sig5', [ALICE, BOB], ['18014398509481990', '0'], ['5', '18014398509480985']);
    expect(matchSolanaBlock(lookup({ [BOB]: 'wb' }), 1, [t], new Set())[0]!.amount).toBe('18014398509480985');
  });

  it('a transaction naming a watched reference: a hit of the reference\'s watch for each account it paid, `to` that account', () => {
    const REF = 'Hn2CJuYyyB2H3wwmdHPy1Aun2Jkye3MCSVajzUvw55A9';
    const keys = [ALICE, BOB_USDC, ALICE_USDC, BOB, REF, USDC, TOKEN_PROGRAM];
    const t = tx('sig9', keys, [5_000_000_000, 0, 2_039_280, 0, 0, 1, 1], [4_997_955_720, 2_039_280, 2_039_280, 0, 0, 1, 1], {
      preTokenBalances: [tb(2, ALICE, '5000000')],
      postTokenBalances: [tb(1, BOB, '1250000'), tb(2, ALICE, '3750000')],
    });
    // The reference is watched under its own key; a wallet watched at the reference's string is not the reference's watch.
    const hits = matchSolanaBlock(lookup({ [`reference:${REF}`]: 'wr', [REF]: 'wplain' }), 1, [t], new Set([USDC]));
    expect(hits.map((h) => [h.watch.watchId, h.type, h.direction, h.token, h.amount, h.from, h.to])).toEqual([
      // The rent of the new token account (to it, not to Bob) and Bob's USDC: payments check the recipient.
      ['wr', 'payment', 'in', null, '2039280', ALICE, BOB_USDC],
      ['wr', 'payment', 'in', USDC, '1250000', ALICE, BOB],
    ]);
    expect(matchSolanaBlock(lookup({ [`reference:${REF}`]: 'wr' }), 1, [{ ...t, transaction: { signatures: ['sig10'], message: { accountKeys: keys.filter((k) => k !== REF) } } }], new Set([USDC]))).toEqual([]);
  });
});
