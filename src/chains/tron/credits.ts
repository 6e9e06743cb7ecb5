import type { RouteCredits } from '../family.js';

/**
 * The Tron HTTP API (java-tron, TronGrid). Nodes take GET and POST alike for most routes;
 * `/walletsolidity/...` are the same reads on solidified blocks.
 */
export const TRON_ROUTES: RouteCredits = [
  ['*', '/', 5],
  ...(['wallet', 'walletsolidity'] as const).flatMap((api): Array<['*', string, number]> => [
    ['*', `/${api}/getnowblock`, 10],
    ['*', `/${api}/getblockbynum`, 25],
    ['*', `/${api}/getblockbyid`, 25],
    ['*', `/${api}/getblock`, 25],
    ['*', `/${api}/getblockbylimitnext`, 75],
    ['*', `/${api}/getblockbylatestnum`, 75],
    ['*', `/${api}/gettransactionbyid`, 15],
    ['*', `/${api}/gettransactioninfobyid`, 15],
    ['*', `/${api}/gettransactioninfobyblocknum`, 75],
    ['*', `/${api}/getaccount`, 15],
    ['*', `/${api}/getassetissuebyid`, 10],
    ['*', `/${api}/triggerconstantcontract`, 26],
    ['*', `/${api}/estimateenergy`, 30],
  ]),
  ['*', '/wallet/getaccountresource', 15],
  ['*', '/wallet/getaccountnet', 15],
  ['*', '/wallet/getcontract', 15],
  ['*', '/wallet/getcontractinfo', 15],
  ['*', '/wallet/getchainparameters', 5],
  ['*', '/wallet/getnodeinfo', 5],
  ['*', '/wallet/validateaddress', 5],
  ['*', '/wallet/createtransaction', 20],
  ['*', '/wallet/transferasset', 20],
  ['*', '/wallet/triggersmartcontract', 26],
  ['POST', '/wallet/broadcasttransaction', 100],
  ['POST', '/wallet/broadcasthex', 100],
  ['GET', '/v1/accounts/{address}', 15],
  ['GET', '/v1/accounts/{address}/transactions', 30],
  ['GET', '/v1/accounts/{address}/transactions/trc20', 30],
  ['GET', '/v1/transactions/{hash}/events', 20],
  ['GET', '/v1/blocks/{number}/events', 50],
  ['GET', '/v1/contracts/{address}/events', 50],
  ['POST', '/jsonrpc', 20],
];
