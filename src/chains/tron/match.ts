import type { Hit, WatchLookup, WatchRef } from '../family.js';
import { TRANSFER_TOPIC } from '../evm/match.js';
import { tronBase58, tronKey } from './address.js';

/** A transaction of `/wallet/getblockbynum` (hex addresses, the API's default). */
export interface TronTx {
  txID: string;
  ret?: Array<{ contractRet?: string }>;
  raw_data: { contract: Array<{ type: string; parameter: { value: TronContractValue } }> };
}

export interface TronContractValue {
  owner_address?: string;
  to_address?: string;
  /** sun (TRX) or the TRC-10 token's raw amount; a decimal string (read from the source text). */
  amount?: string;
  /** TRC-10 token id, hex of its ASCII digits. */
  asset_name?: string;
  contract_address?: string;
  data?: string;
  call_value?: string;
}

/** An entry of `/wallet/gettransactioninfobyblocknum`. */
export interface TronTxInfo {
  id: string;
  receipt?: { result?: string };
  log?: Array<{ address: string; topics?: string[]; data?: string }>;
}

const TRANSFER = TRANSFER_TOPIC.slice(2);
/** transfer(address,uint256) */
const TRANSFER_SELECTOR = 'a9059cbb';

/** Whether a transaction succeeded: `contractRet` SUCCESS (absent on very old blocks: success). */
export function tronTxSucceeded(tx: TronTx): boolean {
  const ret = tx.ret?.[0]?.contractRet;
  return ret === undefined || ret === 'SUCCESS';
}

/** Transactions that may carry TRC-20 Transfer logs: the reason to ask for the block's infos. */
export function hasContractCalls(txs: readonly TronTx[]): boolean {
  return txs.some((t) => t.raw_data.contract[0]?.type === 'TriggerSmartContract' && tronTxSucceeded(t));
}

/**
 * The hits of one block. TRX (`TransferContract`, amount in sun) and TRC-10
 * (`TransferAssetContract`, `token` = the token id) transfers come from the block; TRC-20
 * transfers from the `Transfer` logs of the transaction infos (`token` = the contract as
 * `T…`, raw amount, `log_index`). A failed transaction moved nothing: the sides it names are
 * `other` hits (amount 0), also the recipient of a failed TRC-20 `transfer(to, amount)` call,
 * never a payment. A successful contract call that moved nothing for a watched caller is
 * `other` too, as on EVM chains.
 */
export function matchTronBlock(registry: WatchLookup, envId: number, txs: readonly TronTx[], infos: readonly TronTxInfo[]): Hit[] {
  const infoById = new Map<string, TronTxInfo>();
  for (const i of infos) if (i.log?.length) infoById.set(i.id, i);
  const hits: Hit[] = [];
  const lookup = (hexAddress: string | undefined) => (hexAddress ? registry.lookup(envId, tronKey(hexAddress)) : undefined);
  const push = (watches: WatchRef[] | undefined, h: Omit<Hit, 'watch'>, moved?: Set<string>) => {
    for (const w of watches ?? []) {
      hits.push({ watch: w, ...h });
      moved?.add(w.watchId);
    }
  };
  for (const tx of txs) {
    const c = tx.raw_data.contract[0];
    if (!c) continue;
    const v = c.parameter.value;
    const ok = tronTxSucceeded(tx);
    const base = { txHash: tx.txID, logIndex: null };
    const from = v.owner_address ? tronBase58(v.owner_address) : null;
    switch (c.type) {
      case 'TransferContract':
      case 'TransferAssetContract': {
        const fromW = lookup(v.owner_address);
        const toW = lookup(v.to_address);
        if (!fromW && !toW) break;
        const to = v.to_address ? tronBase58(v.to_address) : null;
        const token = c.type === 'TransferAssetContract' ? assetName(v.asset_name) : null;
        const amount = ok ? (v.amount ?? '0') : '0';
        push(fromW, { ...base, type: ok ? 'payout' : 'other', direction: 'out', from, to, token, amount });
        push(toW, { ...base, type: ok ? 'payment' : 'other', direction: 'in', from, to, token, amount });
        break;
      }
      case 'TriggerSmartContract': {
        const moved = new Set<string>();
        const contract = v.contract_address ? tronBase58(v.contract_address) : null;
        const callerW = lookup(v.owner_address);
        if (ok) {
          const callValue = BigInt(v.call_value ?? '0');
          if (callValue > 0n) {
            push(callerW, { ...base, type: 'payout', direction: 'out', from, to: contract, token: null, amount: callValue.toString() }, moved);
            push(lookup(v.contract_address), { ...base, type: 'payment', direction: 'in', from, to: contract, token: null, amount: callValue.toString() }, moved);
          }
          const logs = infoById.get(tx.txID)?.log ?? [];
          logs.forEach((log, index) => {
            const t = log.topics ?? [];
            if (t.length !== 3 || t[0]!.toLowerCase() !== TRANSFER) return; // 4 topics: TRC-721
            const fromHex = t[1]!.slice(-40);
            const toHex = t[2]!.slice(-40);
            const fromW = lookup(fromHex);
            const toW = lookup(toHex);
            if (!fromW && !toW) return;
            const amount = BigInt(log.data ? `0x${log.data}` : 0).toString();
            const h = { ...base, from: tronBase58(fromHex), to: tronBase58(toHex), token: tronBase58(log.address), amount, logIndex: index };
            push(fromW, { ...h, type: 'payout', direction: 'out' }, moved);
            push(toW, { ...h, type: 'payment', direction: 'in' }, moved);
          });
        } else {
          // The transfer(to, amount) a failed call tried: its recipient must learn it is no payment.
          const to = transferRecipient(v.data);
          if (to) push(lookup(to), { ...base, type: 'other', direction: 'in', from, to: tronBase58(to), token: contract, amount: '0' }, moved);
        }
        for (const w of callerW ?? []) {
          if (!moved.has(w.watchId)) hits.push({ watch: w, ...base, type: 'other', direction: 'out', from, to: contract, token: null, amount: '0' });
        }
        break;
      }
      default: {
        // Staking, votes, account changes... touch the owner without a transfer we report.
        push(lookup(v.owner_address), { ...base, type: 'other', direction: 'out', from, to: null, token: null, amount: '0' });
      }
    }
  }
  return hits;
}

/** The `to` (as `41…`) of `transfer(address,uint256)` call data, if it is one. */
function transferRecipient(data: string | undefined): string | undefined {
  if (!data || data.length < 8 + 128 || data.slice(0, 8).toLowerCase() !== TRANSFER_SELECTOR) return undefined;
  return `41${data.slice(8 + 24, 8 + 64).toLowerCase()}`;
}

/** TRC-10 token ids are sent as the hex of their ASCII digits ("31303030303031" is 1000001). */
function assetName(hexName: string | undefined): string | null {
  if (!hexName) return null;
  return /^[0-9a-f]+$/i.test(hexName) && hexName.length % 2 === 0 ? Buffer.from(hexName, 'hex').toString('utf8') : hexName;
}
