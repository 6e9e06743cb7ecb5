import {
  type Address, type Blockhash, type KeyPairSigner, type Lamports,
  appendTransactionMessageInstructions, createTransactionMessage, generateKeyPairSigner, getTransactionEncoder, pipe,
  setTransactionMessageFeePayerSigner, setTransactionMessageLifetimeUsingBlockhash, signTransactionMessageWithSigners,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { findAssociatedTokenPda } from '@solana-program/token';
import type { FakeBlock, FakeSolanaChain } from './chain.js';
import { packMint, packTokenAccount, readTokenAccount } from './parse.js';
import { BLOCKHASH_VALID_BLOCKS, SYSTEM_PROGRAM, TOKEN_PROGRAM, fromBase58 } from './wire.js';

/** Adds lamports to an account (a system account if it does not exist). */
export function fundSol(chain: FakeSolanaChain, address: string, lamports: bigint): void {
  chain.inject([address], (vm) => {
    const acc = vm.getAccount(address as Address);
    if (acc.exists) vm.setAccount({ ...acc, lamports: (acc.lamports + lamports) as Lamports });
    else vm.setAccount({ address: address as Address, lamports: lamports as Lamports, programAddress: SYSTEM_PROGRAM as Address, executable: false, data: new Uint8Array(0), space: 0n });
  });
}

export interface MintOptions { decimals?: number; mintAuthority?: string; freezeAuthority?: string; programId?: string }

/**
 * An initialised SPL Token mint at `address` (e.g. mainnet USDC's, whose key nobody here holds),
 * rent-exempt, with `mintAuthority` (default none) and `decimals` (default 6).
 */
export function createMint(chain: FakeSolanaChain, address: string, opts: MintOptions = {}): string {
  const data = packMint({
    mintAuthority: opts.mintAuthority ? fromBase58(opts.mintAuthority) : null, supply: 0n, decimals: opts.decimals ?? 6,
    freezeAuthority: opts.freezeAuthority ? fromBase58(opts.freezeAuthority) : null,
  });
  setProgramAccount(chain, address, opts.programId ?? TOKEN_PROGRAM, data);
  return address;
}

/** The owner's associated token account for `mint`, created empty if missing. */
export async function createAssociatedTokenAccount(chain: FakeSolanaChain, owner: string, mint: string): Promise<string> {
  const programId = chain.account(mint)?.programAddress ?? TOKEN_PROGRAM;
  const [ata] = await findAssociatedTokenPda({ owner: owner as Address, mint: mint as Address, tokenProgram: programId as Address });
  if (!readTokenAccount(chain.account(ata))) {
    setProgramAccount(chain, ata, programId, packTokenAccount({ mint: fromBase58(mint), owner: fromBase58(owner), amount: 0n }));
  }
  return ata;
}

/** Credits `amount` base units to the owner's associated token account (created if missing); the mint's supply grows. */
export async function mintTo(chain: FakeSolanaChain, owner: string, mint: string, amount: bigint): Promise<string> {
  const ata = await createAssociatedTokenAccount(chain, owner, mint);
  chain.inject([ata, mint], (vm) => {
    for (const [addr, at] of [[ata, 64], [mint, 36]] as const) {
      const acc = vm.getAccount(addr as Address);
      if (!acc.exists) continue;
      const data = Uint8Array.from(acc.data);
      const v = new DataView(data.buffer);
      v.setBigUint64(at, v.getBigUint64(at, true) + amount, true);
      vm.setAccount({ ...acc, data });
    }
  });
  return ata;
}

function setProgramAccount(chain: FakeSolanaChain, address: string, owner: string, data: Uint8Array): void {
  const lamports = chain.minimumBalanceForRentExemption(data.length);
  chain.inject([address], (vm) => vm.setAccount({
    address: address as Address, lamports: lamports as Lamports, programAddress: owner as Address, executable: false, data, space: BigInt(data.length),
  }));
}

/** requestAirdrop's source: a keypair holding 500M SOL. */
export async function faucet(chain: FakeSolanaChain): Promise<KeyPairSigner> {
  const signer = await generateKeyPairSigner();
  fundSol(chain, signer.address, 500_000_000n * 1_000_000_000n);
  return signer;
}

/** A signed system transfer from `from`, with the blockhash of `recent`, in wire bytes. */
export async function transferWire(from: KeyPairSigner, to: string, lamports: bigint, recent: FakeBlock): Promise<Uint8Array> {
  const msg = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(from, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: recent.blockhash as Blockhash, lastValidBlockHeight: BigInt(recent.blockHeight + BLOCKHASH_VALID_BLOCKS) }, m),
    (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: from, destination: to as Address, amount: lamports })], m),
  );
  return Uint8Array.from(getTransactionEncoder().encode(await signTransactionMessageWithSigners(msg)));
}
