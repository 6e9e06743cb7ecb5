import type { RouteCredits } from '../family.js';

/**
 * Credits of Horizon's routes, from the contract's table. `{x}` matches one path segment.
 * Anything else costs the network's `credits.default`.
 */
export const HORIZON_ROUTES: RouteCredits = [
  ['*', '/', 5],
  ['GET', '/ledgers', 20],
  ['GET', '/ledgers/{sequence}', 20],
  ['GET', '/ledgers/{sequence}/transactions', 30],
  ['GET', '/ledgers/{sequence}/operations', 30],
  ['GET', '/ledgers/{sequence}/payments', 30],
  ['GET', '/accounts/{account_id}', 15],
  ['GET', '/accounts/{account_id}/balances', 15],
  ['GET', '/accounts/{account_id}/transactions', 30],
  ['GET', '/accounts/{account_id}/operations', 30],
  ['GET', '/accounts/{account_id}/payments', 30],
  ['GET', '/accounts/{account_id}/offers', 25],
  ['GET', '/accounts/{account_id}/trades', 25],
  ['GET', '/transactions/{hash}', 25],
  ['GET', '/transactions/{hash}/operations', 30],
  ['GET', '/operations/{id}', 20],
  ['GET', '/payments', 30],
  ['GET', '/offers/{offer_id}', 20],
  ['GET', '/order_book', 25],
  ['GET', '/trade_aggregations', 30],
  ['GET', '/paths/strict-send', 35],
  ['GET', '/paths/strict-receive', 35],
  ['GET', '/assets', 20],
  ['GET', '/fee_stats', 10],
  ['POST', '/transactions', 150],
];
