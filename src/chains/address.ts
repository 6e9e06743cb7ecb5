import { RpcctlError } from '../util/errors.js';
// What every family's address codec returns and throws. Its own module so that the codecs
// (chains/<family>/address.ts) and whoever dispatches among them import it from below.

/** An address as stored: `display` is what we return, `key` is what we match on. */
export interface ParsedAddress {
  display: string;
  key: string;
}

export class InvalidAddressError extends RpcctlError {
  readonly code = 'E_INVALID_ADDRESS';
}
