/** Bitcoin's address prefixes by environment slug; undefined for a slug that is not Bitcoin's. */
export function bitcoinAddressFormat(envSlug: string): { bech32: string; pub_key_hash: number; script_hash: number } | undefined {
  switch (envSlug) {
    case 'mainnet': return { bech32: 'bc', pub_key_hash: 0x00, script_hash: 0x05 };
    case 'testnet': case 'testnet4': case 'signet': return { bech32: 'tb', pub_key_hash: 0x6f, script_hash: 0xc4 };
    case 'regtest': return { bech32: 'bcrt', pub_key_hash: 0x6f, script_hash: 0xc4 };
    default: return undefined;
  }
}
