import type { Kysely } from 'kysely';
import type { Database } from '../store/index.js';
import type { WatchFacts } from '../webhooks/watch-facts.js';

/** Address Watch's answers to webhooks (serve/ hands them to the webhook service and routes). */
export const watchFacts: WatchFacts = {
  async eventRemoved(db: Kysely<Database>, eventId: number): Promise<boolean> {
    const row = await db.selectFrom('watch_events').select('removed').where('id', '=', eventId).executeTakeFirst();
    return row?.removed === 1;
  },
  async lastHeight(db: Kysely<Database>, envId: number): Promise<number> {
    const row = await db.selectFrom('scanner_cursors').select('next_height').where('network_environment_id', '=', envId).executeTakeFirst();
    return (row?.next_height ?? 1) - 1;
  },
};
