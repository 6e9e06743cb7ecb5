/** The built-in credit table of EVM networks (a network's config may give its own). */
export const evmCredits = {
  default: 20,
  methods: {
    eth_blockNumber: 10, eth_chainId: 5, net_version: 5, web3_clientVersion: 5,
    eth_gasPrice: 10, eth_maxPriorityFeePerGas: 10, eth_feeHistory: 20,
    eth_getBalance: 15, eth_getCode: 15, eth_getStorageAt: 15, eth_getTransactionCount: 15,
    eth_call: 26, eth_estimateGas: 30,
    eth_getBlockByNumber: 25, eth_getBlockByHash: 25,
    eth_getTransactionByHash: 15, eth_getTransactionReceipt: 15, eth_getBlockReceipts: 50,
    eth_getLogs: 75, eth_sendRawTransaction: 100,
    eth_subscribe: 10, eth_unsubscribe: 10, eth_subscription: 10,
    debug_traceTransaction: 300, trace_block: 300,
  },
};
