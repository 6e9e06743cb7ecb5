import type { EncodedAccount } from '@solana/kit';
import {
  ATA_PROGRAM, MEMO_PROGRAM, MEMO_V1_PROGRAM, SYSTEM_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, toBase58, uiTokenAmount,
} from './wire.js';

/** SPL Token account (165 bytes) and mint (82 bytes) layouts, as the Token program packs them. */
export interface TokenAccountState { mint: string; owner: string; amount: bigint; state: number; delegate: string | null; isNative: bigint | null; delegatedAmount: bigint; closeAuthority: string | null }
export interface MintState { mintAuthority: string | null; supply: bigint; decimals: number; isInitialized: boolean; freezeAuthority: string | null }

export const TOKEN_ACCOUNT_LEN = 165;
export const MINT_LEN = 82;

const isTokenProgram = (p: string) => p === TOKEN_PROGRAM || p === TOKEN_2022_PROGRAM;
const view = (d: Uint8Array) => new DataView(d.buffer, d.byteOffset, d.byteLength);
const optKey = (d: Uint8Array, at: number) => (view(d).getUint32(at, true) === 1 ? toBase58(d.subarray(at + 4, at + 36)) : null);

export function readTokenAccount(acc: Pick<EncodedAccount, 'programAddress' | 'data'> | null): TokenAccountState | null {
  if (!acc || !isTokenProgram(acc.programAddress) || acc.data.length < TOKEN_ACCOUNT_LEN) return null;
  const d = Uint8Array.from(acc.data);
  if (acc.programAddress === TOKEN_PROGRAM && d.length !== TOKEN_ACCOUNT_LEN) return null;
  if (d.length > TOKEN_ACCOUNT_LEN && d[TOKEN_ACCOUNT_LEN] !== 2) return null;
  const v = view(d);
  const state = d[108]!;
  if (state === 0) return null;
  return {
    mint: toBase58(d.subarray(0, 32)), owner: toBase58(d.subarray(32, 64)), amount: v.getBigUint64(64, true),
    delegate: optKey(d, 72), state, isNative: v.getUint32(109, true) === 1 ? v.getBigUint64(113, true) : null,
    delegatedAmount: v.getBigUint64(121, true), closeAuthority: optKey(d, 129),
  };
}

export function readMint(acc: Pick<EncodedAccount, 'programAddress' | 'data'> | null): MintState | null {
  if (!acc || !isTokenProgram(acc.programAddress) || acc.data.length < MINT_LEN) return null;
  const d = Uint8Array.from(acc.data);
  if (d.length !== MINT_LEN && (d.length <= TOKEN_ACCOUNT_LEN || d[TOKEN_ACCOUNT_LEN] !== 1)) return null;
  return {
    mintAuthority: optKey(d, 0), supply: view(d).getBigUint64(36, true), decimals: d[44]!,
    isInitialized: d[45] === 1, freezeAuthority: optKey(d, 46),
  };
}

function putOptKey(d: Uint8Array, at: number, key: Uint8Array | null): void {
  if (!key) return;
  view(d).setUint32(at, 1, true);
  d.set(key, at + 4);
}

export function packMint(m: { mintAuthority: Uint8Array | null; supply: bigint; decimals: number; freezeAuthority: Uint8Array | null }): Uint8Array {
  const d = new Uint8Array(MINT_LEN);
  putOptKey(d, 0, m.mintAuthority);
  view(d).setBigUint64(36, m.supply, true);
  d[44] = m.decimals;
  d[45] = 1;
  putOptKey(d, 46, m.freezeAuthority);
  return d;
}

export function packTokenAccount(t: { mint: Uint8Array; owner: Uint8Array; amount: bigint }): Uint8Array {
  const d = new Uint8Array(TOKEN_ACCOUNT_LEN);
  d.set(t.mint, 0);
  d.set(t.owner, 32);
  view(d).setBigUint64(64, t.amount, true);
  d[108] = 1;
  return d;
}

const STATES = ['uninitialized', 'initialized', 'frozen'];

/** getAccountInfo's `jsonParsed` for token accounts and mints (agave's parse_token); null where it has no parser. */
export function parsedAccountData(acc: EncodedAccount, decimalsOf: (mint: string) => number | null): unknown {
  if (!isTokenProgram(acc.programAddress)) return null;
  const program = acc.programAddress === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022';
  const t = readTokenAccount(acc);
  if (t) {
    const decimals = decimalsOf(t.mint);
    if (decimals === null) return null;
    const info: Record<string, unknown> = {
      isNative: t.isNative !== null, mint: t.mint, owner: t.owner, state: STATES[t.state], tokenAmount: uiTokenAmount(t.amount, decimals),
    };
    if (t.delegate) { info.delegate = t.delegate; info.delegatedAmount = uiTokenAmount(t.delegatedAmount, decimals); }
    if (t.isNative !== null) info.rentExemptReserve = uiTokenAmount(t.isNative, decimals);
    if (t.closeAuthority) info.closeAuthority = t.closeAuthority;
    return { parsed: { info, type: 'account' }, program, space: acc.data.length };
  }
  const m = readMint(acc);
  if (m) {
    return {
      parsed: { info: { decimals: m.decimals, freezeAuthority: m.freezeAuthority, isInitialized: m.isInitialized, mintAuthority: m.mintAuthority, supply: m.supply.toString() }, type: 'mint' },
      program, space: acc.data.length,
    };
  }
  return null;
}

const u64 = (d: Uint8Array, at: number) => (d.length >= at + 8 ? view(d).getBigUint64(at, true) : 0n);

/**
 * An instruction as `jsonParsed` shows it (agave's parse_instruction for System, SPL Token,
 * Associated Token Account and Memo); null leaves it as `{ programId, accounts, data }`.
 */
export function parseInstruction(programId: string, accounts: string[], data: Uint8Array, decimalsOf: (mint: string) => number | null): { program: string; parsed: unknown } | null {
  const a = (i: number) => accounts[i] ?? '';
  if (programId === MEMO_PROGRAM || programId === MEMO_V1_PROGRAM) return { program: 'spl-memo', parsed: new TextDecoder().decode(data) };
  if (programId === SYSTEM_PROGRAM && data.length >= 4) {
    const kind = view(data).getUint32(0, true);
    if (kind === 2) return { program: 'system', parsed: { type: 'transfer', info: { source: a(0), destination: a(1), lamports: Number(u64(data, 4)) } } };
    if (kind === 0) {
      return { program: 'system', parsed: { type: 'createAccount', info: { source: a(0), newAccount: a(1), lamports: Number(u64(data, 4)), space: Number(u64(data, 12)), owner: toBase58(data.subarray(20, 52)) } } };
    }
    if (kind === 1) return { program: 'system', parsed: { type: 'assign', info: { account: a(0), owner: toBase58(data.subarray(4, 36)) } } };
    if (kind === 8) return { program: 'system', parsed: { type: 'allocate', info: { account: a(0), space: Number(u64(data, 4)) } } };
    return null;
  }
  if (programId === ATA_PROGRAM) {
    if (data.length > 1 || (data.length === 1 && data[0]! > 1)) return null;
    const type = data[0] === 1 ? 'createIdempotent' : 'create';
    return { program: 'spl-associated-token-account', parsed: { type, info: { source: a(0), account: a(1), wallet: a(2), mint: a(3), systemProgram: a(4), tokenProgram: a(5) } } };
  }
  if (isTokenProgram(programId) && data.length >= 1) {
    const program = programId === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022';
    const token = parseTokenInstruction(data, a, decimalsOf);
    return token ? { program, parsed: token } : null;
  }
  return null;
}

function parseTokenInstruction(data: Uint8Array, a: (i: number) => string, decimalsOf: (mint: string) => number | null): unknown {
  const amount = u64(data, 1);
  const checked = (mint: string) => uiTokenAmount(amount, data[9] ?? decimalsOf(mint) ?? 0);
  switch (data[0]) {
    case 0: case 20: return {
      type: data[0] === 0 ? 'initializeMint' : 'initializeMint2',
      info: { mint: a(0), decimals: data[1], mintAuthority: toBase58(data.subarray(2, 34)), ...(data[34] === 1 ? { freezeAuthority: toBase58(data.subarray(35, 67)) } : {}), ...(data[0] === 0 ? { rentSysvar: a(1) } : {}) },
    };
    case 1: return { type: 'initializeAccount', info: { account: a(0), mint: a(1), owner: a(2), rentSysvar: a(3) } };
    case 16: return { type: 'initializeAccount2', info: { account: a(0), mint: a(1), owner: toBase58(data.subarray(1, 33)), rentSysvar: a(2) } };
    case 18: return { type: 'initializeAccount3', info: { account: a(0), mint: a(1), owner: toBase58(data.subarray(1, 33)) } };
    case 3: return { type: 'transfer', info: { source: a(0), destination: a(1), authority: a(2), amount: amount.toString() } };
    case 4: return { type: 'approve', info: { source: a(0), delegate: a(1), owner: a(2), amount: amount.toString() } };
    case 5: return { type: 'revoke', info: { source: a(0), owner: a(1) } };
    case 7: return { type: 'mintTo', info: { mint: a(0), account: a(1), mintAuthority: a(2), amount: amount.toString() } };
    case 8: return { type: 'burn', info: { account: a(0), mint: a(1), authority: a(2), amount: amount.toString() } };
    case 9: return { type: 'closeAccount', info: { account: a(0), destination: a(1), owner: a(2) } };
    case 12: return { type: 'transferChecked', info: { source: a(0), mint: a(1), destination: a(2), authority: a(3), tokenAmount: checked(a(1)) } };
    case 14: return { type: 'mintToChecked', info: { mint: a(0), account: a(1), mintAuthority: a(2), tokenAmount: checked(a(0)) } };
    case 15: return { type: 'burnChecked', info: { account: a(0), mint: a(1), authority: a(2), tokenAmount: checked(a(1)) } };
    case 17: return { type: 'syncNative', info: { account: a(0) } };
    default: return null;
  }
}
