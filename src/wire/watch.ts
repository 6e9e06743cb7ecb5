import { z } from 'zod';

// The Address Watch shapes of the Public API that the server and the published client share
// (docs/architecture.md, "Wire shapes").

/** A watched address. */
export const watchSchema = z.object({
  watch_id: z.string(),
  network_slug: z.string(),
  address: z.string(),
  created_at: z.string(),
}).meta({ id: 'WatchedAddress' });
export type WatchedAddress = z.output<typeof watchSchema>;
