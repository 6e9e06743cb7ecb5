import { encodeFunctionData, erc20Abi, getAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainOf } from '../src/chains/index.js';
import type { ChainAdapter, ChainEnvironment, ExpectedLine } from '../src/chains/family.js';
import { broadcastTransaction, PayoutTxError, verifySignedTransaction } from '../src/chains/payouts.js';
import { ANVIL_KEYS, deployToken, startAnvil, type Anvil } from './helpers/anvil.js';

/**
 * Signed EVM payout transactions against anvil: viem (the merchant's wallet here) signs an ETH
 * and an ERC-20 transfer; rpcctl's check takes them against the right line and refuses a wrong
 * address, amount or chain; the environment's adapter broadcasts them and they land.
 */

const payer = privateKeyToAccount(ANVIL_KEYS[0]);
const customer = getAddress('0x90f79bf6eb2c4f870365e785982e1f101e93b906');

describe('signed EVM payouts on anvil', () => {
  let anvil: Anvil;
  let adapter: ChainAdapter;
  let token: Address;
  let chainId: number;
  const env: ChainEnvironment = { slug: 'anvil', network: { slug: 'eth', family: 'evm' }, upstreams: [] };

  beforeAll(async () => {
    anvil = await startAnvil();
    env.upstreams = [anvil.url];
    adapter = chainOf('evm').scanner(env.upstreams);
    chainId = await adapter.chainId!();
    token = await deployToken(anvil, payer.address, 10n ** 24n);
  }, 60_000);

  afterAll(async () => {
    await adapter?.close();
    await anvil?.stop();
  });

  const sign = async (request: { to: Address; value?: bigint; data?: Hex; chainId?: number }) => payer.signTransaction({
    type: 'eip1559', ...request, chainId: request.chainId ?? chainId,
    nonce: await anvil.public.getTransactionCount({ address: payer.address, blockTag: 'pending' }),
    gas: 100_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n,
  });
  const check = (raw: string, line: ExpectedLine, id = chainId) => verifySignedTransaction('evm', raw, { env, lines: [line], chainId: id });
  const refusal = (raw: string, line: ExpectedLine, id = chainId): PayoutTxError => {
    try {
      check(raw, line, id);
    } catch (err) {
      if (err instanceof PayoutTxError) return err;
      throw err;
    }
    throw new Error('accepted');
  };
  const landed = async (hash: string) => (await anvil.public.waitForTransactionReceipt({ hash: hash as Hex, pollingInterval: 50 })).status;

  it('an ETH refund: accepted against its line, refused against another address, amount or chain; broadcast lands it', async () => {
    const line = { address: customer, amountRaw: 10n ** 17n };
    const raw = await sign({ to: customer, value: 10n ** 17n });
    expect(refusal(raw, { ...line, address: payer.address })).toMatchObject({ code: 'E_TX_MISMATCH', message: `pays ${customer}, not the line's ${payer.address}` });
    expect(refusal(raw, { ...line, amountRaw: 10n ** 17n + 1n }).code).toBe('E_TX_MISMATCH');
    expect(refusal(raw, line, 1)).toMatchObject({ code: 'E_TX_CHAIN', message: `is signed for chain id ${chainId}, not this network's 1` });
    const otherChain = await sign({ to: customer, value: 10n ** 17n, chainId: 1 });
    expect(refusal(otherChain, line).code).toBe('E_TX_CHAIN');

    const before = await anvil.public.getBalance({ address: customer });
    const verified = check(raw, line);
    expect(verified.from).toBe(payer.address);
    expect(await broadcastTransaction(adapter, verified.raw)).toBe(verified.txHash);
    expect(await landed(verified.txHash)).toBe('success');
    expect(await anvil.public.getBalance({ address: customer })).toBe(before + 10n ** 17n);
    // Sent again: the node has it; no error, the same hash.
    expect(await broadcastTransaction(adapter, verified.raw)).toBe(verified.txHash);
  });

  it('an ERC-20 payout: transfer(customer, amount) on the token; a wrong recipient is refused; broadcast lands it', async () => {
    const line = { address: customer, amountRaw: 2_500_000n, token };
    const raw = await sign({ to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [customer, 2_500_000n] }) });
    const wrong = await sign({ to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [payer.address, 2_500_000n] }) });
    expect(refusal(wrong, line)).toMatchObject({ code: 'E_TX_MISMATCH', message: `transfers the token to ${payer.address}, not the line's ${customer}` });
    expect(refusal(raw, { ...line, amountRaw: 2_500_001n }).code).toBe('E_TX_MISMATCH');
    expect(refusal(raw, { address: customer, amountRaw: 2_500_000n }).code).toBe('E_TX_MISMATCH');

    const verified = check(raw, line);
    expect(await broadcastTransaction(adapter, verified.raw)).toBe(verified.txHash);
    expect(await landed(verified.txHash)).toBe('success');
    expect(await anvil.public.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [customer] })).toBe(2_500_000n);
    // The wrong one was signed with the same nonce: the node refuses it now, in its own words.
    await expect(broadcastTransaction(adapter, wrong)).rejects.toMatchObject({ code: 'E_TX_REJECTED', message: expect.stringMatching(/^the node refused the transaction: eth_sendRawTransaction: .*nonce/i) });
  });

  it('families that take no signed transactions say so', () => {
    const stellar: ChainEnvironment = { slug: 'testnet', network: { slug: 'stellar', family: 'stellar' }, upstreams: [] };
    expect(() => verifySignedTransaction('stellar', 'AAAA', { env: stellar, lines: [] })).toThrow(expect.objectContaining({ code: 'E_TX_UNSUPPORTED', message: expect.stringMatching(/^stellar takes no signed transactions: pay from the payment request/) }));
    expect(() => verifySignedTransaction('tron', 'AAAA', { env: stellar, lines: [] })).toThrow(PayoutTxError);
  });
});
