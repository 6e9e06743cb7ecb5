/**
 * Bitcoin Core's JSON-RPC methods (and the same names on Litecoin/Dogecoin nodes). `getblock`
 * at verbosity 2/3 carries every transaction of the block, hence its price.
 */
export const bitcoinCredits = {
  default: 20,
  methods: {
    getblockchaininfo: 10, getblockcount: 5, getbestblockhash: 5, getblockhash: 5, getblockheader: 10, getchaintips: 10,
    getdifficulty: 5, getnetworkinfo: 5, getmempoolinfo: 10, getindexinfo: 5, validateaddress: 5, uptime: 5,
    getblock: 60, getblockstats: 30, getrawtransaction: 20, decoderawtransaction: 10, decodescript: 10,
    gettxout: 15, gettxoutproof: 20, verifytxoutproof: 20, getmempoolentry: 10, getmempoolancestors: 20,
    getmempooldescendants: 20, getrawmempool: 50, estimatesmartfee: 10, testmempoolaccept: 30,
    sendrawtransaction: 100, submitpackage: 150, scantxoutset: 500, gettxoutsetinfo: 500,
  },
};
