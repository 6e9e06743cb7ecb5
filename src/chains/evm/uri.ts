import type { PaymentUri } from '../family.js';

/**
 * EIP-681 with the chain id, so a wallet on another chain switches rather than sending there:
 * native `ethereum:0xADDR@1?value=WEI`, an ERC-20 transfer
 * `ethereum:0xTOKEN@1/transfer?address=0xADDR&uint256=AMOUNT` (base units, plain integers).
 */
export const eip681Uri: PaymentUri = async ({ address, asset, amountRaw }, chain) => {
  const id = await chain().chainId!();
  return asset === 'native'
    ? `ethereum:${address}@${id}?value=${amountRaw}`
    : `ethereum:${asset}@${id}/transfer?address=${address}&uint256=${amountRaw}`;
};
