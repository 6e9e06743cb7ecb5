import type { Config } from '../config/index.js';
import type { Environment } from '../store/index.js';
import { assetOfRow } from './assets.js';
import { parseDecimal } from './fiat.js';

/**
 * The amount a customer is asked for on the checkout page, its QR and its "Open in wallet"
 * link. A fiat price divided by a rate has digits far below anything a wallet shows
 * (19.99 EUR at 3000 EUR/ETH is 0.006663333333333334 ETH): such an order asks for its amount
 * rounded UP to the asset's display step, so what the customer pays still covers the price.
 * The order keeps its exact amount (the one the rate gave); paying the shown amount covers it
 * with no tolerance at all, and the few base units above it are not an overpayment (`isOverpaid`).
 * An order priced in the asset asks for exactly what the merchant set: those digits are theirs.
 */

/**
 * Decimals wallets show, per asset symbol. One step is worth at most about a cent at today's
 * prices, and no more digits than common wallets display:
 * - BTC, LTC, DOGE 8: whole satoshis, which every wallet and BIP21 amount carries;
 * - ETH, BNB 6: 10^-6 ETH is 0.4 cent at 4,000 USD/ETH, under a cent up to 10,000;
 *   MetaMask, Trust and Rabby show 4 to 6 (wei digits are noise to a customer);
 * - POL 4: 10^-4 POL is 0.005 cent at 0.5 USD;
 * - TRX 6, XLM 7: their own base unit (sun, stroop), as their wallets show;
 * - USD and EUR stablecoins 2: priced in cents, shown in cents (at most 1 cent more);
 * - WBTC 8: like BTC.
 * Assets not listed take the step from the order's rate (see `displayDecimals`).
 */
export const DISPLAY_DECIMALS: Readonly<Record<string, number>> = {
  BTC: 8, LTC: 8, DOGE: 8, WBTC: 8,
  ETH: 6, WETH: 6, BNB: 6,
  POL: 4, MATIC: 4,
  TRX: 6, XLM: 7,
  USDT: 2, USDC: 2, DAI: 2, PYUSD: 2, EURC: 2, EURT: 2,
};

/**
 * Decimals to show of an asset: the table's, else the fewest at which one step is worth at
 * most a thousandth of the price's currency unit at `rate` (currency per asset unit); never
 * more than the asset has. Without a rate (an order priced in the asset) all of them.
 */
export function displayDecimals(symbol: string, decimals: number, rate: string | null): number {
  const listed = DISPLAY_DECIMALS[symbol.toUpperCase()];
  if (listed !== undefined) return Math.min(listed, decimals);
  if (rate === null) return decimals;
  // 10^-d × rate ≤ 10^-3  ⇔  10^(d + scale) ≥ units × 1000, with rate = units / 10^scale.
  const { units, scale } = parseDecimal(rate);
  let d = 0;
  while (d < decimals && 10n ** BigInt(d + scale) < units * 1000n) d++;
  return d;
}

/** `raw` base units rounded up to a multiple of 10^(decimals − shown): 6663333333333334n at 18/6 → 6664000000000000n. */
export function roundUp(raw: bigint, decimals: number, shown: number): bigint {
  if (shown >= decimals || raw <= 0n) return raw;
  const step = 10n ** BigInt(decimals - shown);
  return ((raw + step - 1n) / step) * step;
}

/** What of an order decides how it is shown: a fiat-priced one has its locked `rate`. */
export interface ShownOrder {
  amount_raw: string;
  decimals: number;
  rate: string | null;
}

/**
 * The amount to ask the customer for, in base units, when `raw` (the amount, or what is still
 * due) is owed: rounded up to the display step for a fiat-priced order, exact otherwise.
 */
export function shownRaw(order: ShownOrder, symbol: string, raw: bigint): bigint {
  if (order.rate === null) return raw;
  return roundUp(raw, order.decimals, displayDecimals(symbol, order.decimals, order.rate));
}

/**
 * Whether `received` is more than the customer was asked for. For a fiat-priced order that is
 * a whole display step or more above the exact amount: the page asks for the amount rounded
 * up, and when underpaid for what is still due rounded up, so a customer who paid part off the
 * step (a wallet or an exchange took its fee) and then exactly the shown rest has paid up to one
 * step minus a base unit over the exact amount, more than the shown amount itself, and that is
 * still what the page asked, not an overpayment. A step or more is more than any page asked.
 */
export function isOverpaid(order: ShownOrder, symbol: string, received: bigint): boolean {
  const amount = BigInt(order.amount_raw);
  if (order.rate === null) return received > amount;
  const shown = displayDecimals(symbol, order.decimals, order.rate);
  const step = shown >= order.decimals ? 1n : 10n ** BigInt(order.decimals - shown);
  return received >= amount + step;
}

/** `isOverpaid` for a stored order, its symbol looked up from the config (the engine's call). */
export function orderOverpaid(config: Config, env: Environment | undefined, order: ShownOrder & { asset: string }, received: bigint): boolean {
  return isOverpaid(order, assetOfRow(config, env, order.asset, order.decimals).symbol, received);
}
