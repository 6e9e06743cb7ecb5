import { encodeFunctionData, erc20Abi, getAddress, keccak256, parseTransaction, type TransactionSerializable } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import type { ChainEnvironment, ExpectedLine, ExpectedTransfer } from '../family.js';
import { PayoutTxError } from '../payout-tx.js';
import { decodeRlp, encodeRlp, verifyEvmTransaction } from './verify.js';

// Transactions signed by viem (an independent implementation) with anvil's first well-known test key.
const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const ENV: ChainEnvironment = { slug: 'local', network: { slug: 'anvil', family: 'evm' }, upstreams: [] };
const TO = getAddress('0x70997970c51812dc3a010c7d01b50e20d17dc79c');
const TOKEN = getAddress('0x5fbdb2315678afecb367f032d93f642f64180aa3');
const CHAIN = 31337;

const expected = (line: ExpectedLine, chainId = CHAIN): ExpectedTransfer => ({ env: ENV, lines: [line], chainId });
const sign = (tx: TransactionSerializable) => account.signTransaction(tx);
const transfer = (to: string, amount: bigint) => encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to as `0x${string}`, amount] });

async function refused(raw: Promise<string> | string, exp: ExpectedTransfer): Promise<PayoutTxError> {
  try {
    verifyEvmTransaction(await raw, exp);
  } catch (err) {
    if (err instanceof PayoutTxError) return err;
    throw err;
  }
  throw new Error('accepted');
}

describe('signed EVM transaction check', () => {
  it('native coin: EIP-1559, EIP-2930 and EIP-155 legacy; hash and sender as viem has them', async () => {
    const base = { to: TO as `0x${string}`, value: 10n ** 18n, nonce: 7, gas: 21_000n, chainId: CHAIN } as const;
    for (const raw of [
      await sign({ ...base, type: 'eip1559', maxFeePerGas: 2_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n }),
      await sign({ ...base, type: 'eip2930', gasPrice: 1_000_000_000n, accessList: [{ address: TOKEN as `0x${string}`, storageKeys: [`0x${'00'.repeat(31)}01`] }] }),
      await sign({ ...base, type: 'legacy', gasPrice: 1_000_000_000n }),
      // A chain id above 0xff takes more than one byte in `v`.
      await sign({ ...base, type: 'legacy', gasPrice: 1_000_000_000n, chainId: 11155111 }),
    ]) {
      const chainId = parseTransaction(raw).chainId!;
      const v = verifyEvmTransaction(raw, expected({ address: TO.toLowerCase(), amountRaw: 10n ** 18n }, chainId));
      expect(v).toEqual({ txHash: keccak256(raw), raw, from: account.address, spends: [`${account.address.toLowerCase()}:7`] });
    }
  });

  it('ERC-20: transfer(address, amount) to the token contract', async () => {
    const raw = await sign({ type: 'eip1559', to: TOKEN as `0x${string}`, data: transfer(TO, 1_500_000n), nonce: 1, gas: 60_000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n, chainId: CHAIN });
    expect(verifyEvmTransaction(raw, expected({ address: TO, amountRaw: 1_500_000n, token: TOKEN })).from).toBe(account.address);
    expect(await refused(raw, expected({ address: TO, amountRaw: 1_500_001n, token: TOKEN }))).toMatchObject({ code: 'E_TX_MISMATCH', message: expect.stringMatching(/transfers 1500000 .*not the line's 1500001/) });
    expect(await refused(raw, expected({ address: account.address, amountRaw: 1_500_000n, token: TOKEN }))).toMatchObject({ code: 'E_TX_MISMATCH', message: expect.stringMatching(new RegExp(`transfers the token to ${TO}, not the line's 0xf39F`)) });
    expect(await refused(raw, expected({ address: TO, amountRaw: 1_500_000n, token: TO }))).toMatchObject({ code: 'E_TX_MISMATCH', message: expect.stringMatching(/calls 0x5FbDB.* not the token contract/) });
    // The token line paid in the native coin, and the native line paid by a token transfer.
    expect((await refused(raw, expected({ address: TO, amountRaw: 1_500_000n }))).message).toMatch(/pays 0x5FbDB.*, not the line's 0x7099/);
    const approve = await sign({ type: 'eip1559', to: TOKEN as `0x${string}`, data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [TO, 1_500_000n] }), nonce: 1, gas: 60_000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n, chainId: CHAIN });
    expect((await refused(approve, expected({ address: TO, amountRaw: 1_500_000n, token: TOKEN }))).message).toMatch(/not an ERC-20 transfer/);
  });

  it('refuses a wrong address, a wrong amount, another chain, no chain id, calldata on a native payment, garbage', async () => {
    const line = { address: TO, amountRaw: 5n };
    const raw = sign({ type: 'eip1559', to: TO as `0x${string}`, value: 5n, nonce: 0, gas: 21_000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n, chainId: CHAIN });
    expect(await refused(raw, expected({ ...line, address: account.address }))).toMatchObject({ code: 'E_TX_MISMATCH', message: expect.stringMatching(/pays 0x7099.*, not the line's 0xf39F/) });
    expect(await refused(raw, expected({ ...line, amountRaw: 6n }))).toMatchObject({ code: 'E_TX_MISMATCH', message: 'sends 5 wei, not the line\'s 6' });
    expect(await refused(raw, expected(line, 1))).toMatchObject({ code: 'E_TX_CHAIN', message: 'is signed for chain id 31337, not this network\'s 1' });
    expect(await refused(sign({ type: 'legacy', to: TO as `0x${string}`, value: 5n, nonce: 0, gas: 21_000n, gasPrice: 1n }), expected(line))).toMatchObject({ code: 'E_TX_CHAIN', message: expect.stringMatching(/pre-EIP-155/) });
    expect(await refused(sign({ type: 'eip1559', to: TO as `0x${string}`, value: 5n, data: '0x01', nonce: 0, gas: 30_000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n, chainId: CHAIN }), expected(line))).toMatchObject({ code: 'E_TX_MISMATCH', message: expect.stringMatching(/calldata/) });
    expect(await refused('0xdeadbeef', expected(line))).toMatchObject({ code: 'E_TX_DECODE' });
    expect(await refused((await raw).slice(0, -4), expected(line))).toMatchObject({ code: 'E_TX_DECODE' });
    expect(await refused('hello', expected(line))).toMatchObject({ code: 'E_TX_DECODE' });
    expect(await refused(raw, { env: ENV, lines: [line, line], chainId: CHAIN })).toMatchObject({ code: 'E_TX_MISMATCH', message: expect.stringMatching(/one line; 2 were given/) });
  });

  it('a signature that recovers another sender still names who signed (the node checks nonce and balance)', async () => {
    const raw = await sign({ type: 'eip1559', to: TO as `0x${string}`, value: 5n, nonce: 0, gas: 21_000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n, chainId: CHAIN });
    // Flip the last byte of `s`: still a valid signature, of some other key.
    const forged = `${raw.slice(0, -2)}${(Number.parseInt(raw.slice(-2), 16) ^ 1).toString(16).padStart(2, '0')}`;
    const v = verifyEvmTransaction(forged, expected({ address: TO, amountRaw: 5n }));
    expect(v.from).not.toBe(account.address);
  });

  it('RLP round trip: long strings and lists', () => {
    const item = [new Uint8Array(60).fill(1), [new Uint8Array([0x7f]), new Uint8Array(0), [new Uint8Array(100)]]];
    expect(decodeRlp(encodeRlp(item))).toEqual(item);
  });
});
