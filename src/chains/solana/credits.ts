/**
 * The built-in credit table of Solana networks (a network's config may give its own). Priced by
 * what a call costs the node: the slot, health and version are answered from memory; an
 * account read is one index lookup; `getSignaturesForAddress` walks an address's history and
 * `getBlock` carries every transaction of a slot (several MB with `transactionDetails: full`);
 * `getProgramAccounts` and `getLargestAccounts` scan the accounts database, which providers
 * price highest of all or switch off.
 */
export const solanaCredits = {
  default: 20,
  methods: {
    getSlot: 5, getHealth: 5, getVersion: 5, getBlockHeight: 5, getGenesisHash: 5, getIdentity: 5,
    getEpochInfo: 10, getEpochSchedule: 5, getFirstAvailableBlock: 5, minimumLedgerSlot: 5, getSlotLeader: 5,
    getLatestBlockhash: 10, isBlockhashValid: 10, getFeeForMessage: 10, getMinimumBalanceForRentExemption: 5,
    getRecentPrioritizationFees: 15, getRecentPerformanceSamples: 10, getBlockTime: 10, getBlockCommitment: 10,
    getBalance: 15, getAccountInfo: 15, getTokenAccountBalance: 15, getTokenSupply: 15, getSignatureStatuses: 15,
    getMultipleAccounts: 30, getTransaction: 25, getBlocks: 25, getBlocksWithLimit: 25, getInflationReward: 30,
    getTokenAccountsByOwner: 50, getTokenAccountsByDelegate: 50, getTokenLargestAccounts: 50,
    getSupply: 50, getVoteAccounts: 50, getClusterNodes: 50, getLeaderSchedule: 50, getSlotLeaders: 25,
    simulateTransaction: 50, getSignaturesForAddress: 75, getBlock: 100,
    getProgramAccounts: 250, getLargestAccounts: 250,
    sendTransaction: 100, requestAirdrop: 100,
    // PubSub (the gateway meters subscriptions like `eth_subscribe`).
    accountSubscribe: 10, accountUnsubscribe: 10, signatureSubscribe: 10, signatureUnsubscribe: 10,
    slotSubscribe: 10, slotUnsubscribe: 10, logsSubscribe: 10, logsUnsubscribe: 10,
    programSubscribe: 10, programUnsubscribe: 10,
  },
};
