/**
 * A small development list: a few Ethereum addresses from OFAC's SDN list (Tornado Cash
 * contracts and a Lazarus Group address, designated 2022). Production loads the full list
 * with `rpcctl admin aml load SDN_ADVANCED.XML` (docs/payments.md).
 */
export const DEV_SANCTIONS_LIST = `# rpcctl development sanctions list (subset of OFAC SDN digital currency addresses)
ETH 0x8589427373D6D84E98730D7795D8f6f8731FDA16
ETH 0x722122dF12D4e14e13Ac3b6895a86e84145b6967
ETH 0xDD4c48C0B24039969fC16D1cdF626eaB821d3384
ETH 0xd90e2f925DA726b50C4Ed8D0Fb90Ad053324F31b
ETH 0x098B716B8Aaf21512996dC57EB0615e2383E2f96
ETH 0xa0e1c89Ef1a489c9C7dE96311eD5Ce5D32c20E4B
`;
