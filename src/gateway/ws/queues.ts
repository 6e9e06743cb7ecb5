/** A client socket as the send caps see it. */
export interface QueuedSocket {
  readonly ep: { readonly id: number };
  /** Bytes sent to it and not yet written to the kernel. */
  queued: number;
  /** Closed for going over a cap: its bytes still count until the socket is gone. */
  overCap?: boolean;
  /** Gone: what it had queued went with it. */
  released?: boolean;
}

export interface QueueCaps {
  perSocket: number;
  perEndpoint: number;
  total: number;
}

/**
 * The bytes queued for client WebSockets: every frame, answers and notifications alike, counted
 * from `send` until ws hands it to the kernel (or the socket is gone). A client that does not
 * read would otherwise grow them without end.
 *
 * - A socket whose own queue would go over `perSocket` is closed.
 * - Over `perEndpoint` or `total`, the open socket of that scope holding the most is closed: the
 *   one that does not read, not a reader that happened to send next, whose frame still goes.
 * - A closed socket's bytes count until it is gone (ws destroys a socket that does not answer
 *   the close within 30 s): they are memory held all that time. While only closed sockets hold
 *   a scope's bytes, a socket with nothing queued still gets its frame: a client that reads is
 *   not closed for another's unread bytes. The memory stays bounded: closed sockets take
 *   nothing more, and an open one that holds bytes is closed in turn.
 */
export class SendQueues<S extends QueuedSocket = QueuedSocket> {
  readonly #caps: QueueCaps;
  readonly #sockets = new Set<S>();
  readonly #byEndpoint = new Map<number, number>();
  #total = 0;
  readonly #overCap: (socket: S) => void;
  readonly #changed: (total: number) => void;

  constructor(caps: QueueCaps, overCap: (socket: S) => void, changed: (total: number) => void = () => {}) {
    this.#caps = caps;
    this.#overCap = overCap;
    this.#changed = changed;
  }

  get total(): number {
    return this.#total;
  }

  open(socket: S): void {
    this.#sockets.add(socket);
  }

  /** Whether `bytes` more may be queued for `socket`; false: dropped, and the socket closed. */
  admit(socket: S, bytes: number): boolean {
    if (socket.overCap || socket.released) return false;
    if (socket.queued + bytes > this.#caps.perSocket) return this.#close(socket), false;
    const epId = socket.ep.id;
    if ((this.#byEndpoint.get(epId) ?? 0) + bytes > this.#caps.perEndpoint && !this.#closeLargest(socket, (s) => s.ep.id === epId)) return false;
    if (this.#total + bytes > this.#caps.total && !this.#closeLargest(socket, () => true)) return false;
    return true;
  }

  /** `delta` bytes queued (positive) or written out (negative). */
  add(socket: S, delta: number): void {
    if (socket.released) return;
    socket.queued += delta;
    const epId = socket.ep.id;
    const n = (this.#byEndpoint.get(epId) ?? 0) + delta;
    if (n <= 0) this.#byEndpoint.delete(epId);
    else this.#byEndpoint.set(epId, n);
    this.#total += delta;
    this.#changed(this.#total);
  }

  /** The socket is gone, and with it whatever it still had queued. */
  release(socket: S): void {
    if (socket.released) return;
    this.add(socket, -socket.queued);
    socket.released = true;
    this.#sockets.delete(socket);
  }

  /** Closes the open socket holding the most in scope; whether `sender`'s frame may still go. */
  #closeLargest(sender: S, inScope: (s: S) => boolean): boolean {
    let largest: S | undefined;
    for (const s of this.#sockets) {
      if (!s.overCap && s.queued > 0 && inScope(s) && (!largest || s.queued > largest.queued)) largest = s;
    }
    // No open socket holds anything (the sender neither): closed ones hold the bytes, and drain.
    if (!largest) return true;
    this.#close(largest);
    return largest !== sender;
  }

  #close(socket: S): void {
    socket.overCap = true;
    this.#overCap(socket);
  }
}
