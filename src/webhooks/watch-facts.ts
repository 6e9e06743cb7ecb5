import type { Kysely } from 'kysely';
import type { Database } from '../store/index.js';

/**
 * What webhooks need to know of Address Watch, whose tables they do not read: watch/ answers
 * (`watch/facts.ts`) and serve/ hands it in, as webhooks sit below watch in the layers.
 */
export interface WatchFacts {
  /** Whether the event's block left the chain (a reorg): its delivery is never sent. */
  eventRemoved(db: Kysely<Database>, eventId: number): Promise<boolean>;
  /** The environment's last recorded block (a test delivery's sample height); 0 before the first. */
  lastHeight(db: Kysely<Database>, envId: number): Promise<number>;
}
