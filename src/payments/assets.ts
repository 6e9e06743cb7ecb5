import type { Config } from '../config/index.js';
import type { Environment } from '../store/index.js';
import { chainOf } from '../chains/index.js';
import { RpcctlError } from '../util/errors.js';

export interface Asset {
  /** `native`, an EVM contract (EIP-55), a Tron TRC-20 contract (`T…`) or a Stellar `CODE:ISSUER`. */
  id: string;
  symbol: string;
  decimals: number;
  /** What a scanned hit's `token` is for this asset (null for native), lower-cased for EVM, `T…` for Tron. */
  matchKey: string | null;
}

export class AssetError extends RpcctlError {
  readonly code = 'E_ASSET';
}

/** Native symbols of well-known networks (the family default is ETH, BTC, ...). */
const NATIVE_SYMBOLS: Record<string, string> = { polygon: 'POL', bsc: 'BNB', litecoin: 'LTC', dogecoin: 'DOGE' };

/**
 * `native` (the default), a token symbol from `networks[].tokens`, or the token's own id
 * (contract address / CODE:ISSUER). Only listed tokens: their decimals must be known.
 */
export function resolveAsset(config: Config, env: Environment, asset: string | undefined): Asset {
  const family = chainOf(env.network.family);
  const native = family.payments.native;
  if (asset === undefined || asset === 'native') {
    return { id: 'native', symbol: NATIVE_SYMBOLS[env.network.slug] ?? native.symbol, decimals: native.decimals, matchKey: null };
  }
  const tokens = config.networks.find((n) => n.slug === env.network.slug)?.tokens ?? [];
  const wanted = asset.trim();
  const token = tokens.find((t) => t.symbol.toLowerCase() === wanted.toLowerCase()
    || (t.address !== undefined && t.address.toLowerCase() === wanted.toLowerCase())
    || (t.asset !== undefined && t.asset.toUpperCase() === wanted.toUpperCase()));
  if (!token) {
    const listed = tokens.map((t) => t.symbol).join(', ');
    throw new AssetError(`unknown asset "${asset}" on ${env.network.slug} (use "native"${listed ? ` or one of ${listed}` : '; this network lists no tokens (networks[].tokens)'})`);
  }
  if (token.address !== undefined) {
    const { id, matchKey } = family.payments.contractToken(token.address);
    return { id, symbol: token.symbol, decimals: token.decimals, matchKey };
  }
  return { id: token.asset!, symbol: token.symbol, decimals: token.decimals, matchKey: token.asset! };
}

/** The asset of a stored order (its id and decimals are on the row). */
export function assetOfRow(config: Config, env: Environment | undefined, id: string, decimals: number): Asset {
  if (id === 'native') return { id, symbol: env ? resolveAsset(config, env, 'native').symbol : 'native', decimals, matchKey: null };
  const symbol = env ? (config.networks.find((n) => n.slug === env.network.slug)?.tokens ?? [])
    .find((t) => (t.address ?? t.asset ?? '').toLowerCase() === id.toLowerCase())?.symbol : undefined;
  return { id, symbol: symbol ?? id, decimals, matchKey: id.startsWith('0x') ? id.toLowerCase() : id };
}

/** Whether a scanned hit's `token` is the order's asset. */
export function hitIsAsset(asset: Asset, token: string | null): boolean {
  if (asset.matchKey === null) return token === null;
  if (token === null) return false;
  return asset.matchKey.startsWith('0x') ? token.toLowerCase() === asset.matchKey : token === asset.matchKey;
}

/**
 * A referenced order (Solana Pay) counts what its transaction paid the merchant's wallet, as
 * `validateTransfer` checks the recipient: its reference's watch reports every account the
 * transaction paid. An order at its own address counts what its watch received.
 */
export function paysRecipient(order: { reference: string | null; address: string }, to: string | null): boolean {
  return order.reference === null || to === order.address;
}
