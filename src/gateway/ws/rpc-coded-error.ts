import { RpcctlError } from '../../util/errors.js';

/** A WebSocket failure that reaches the client as a JSON-RPC error: `rpcCode` is the number it is answered with. */
export abstract class JsonRpcCodedError extends RpcctlError {
  readonly rpcCode: number;
  constructor(rpcCode: number, message: string) {
    super(message);
    this.rpcCode = rpcCode;
  }
}
