import type { CompiledQuery, KyselyPlugin } from 'kysely';
import type { Store } from '../../src/store/index.js';

/** The store as `s`, recording the SQL of every query run through it (to check their plans). */
export function capturing(s: Store): { store: Store; queries: CompiledQuery[] } {
  const queries: CompiledQuery[] = [];
  // A subquery (a query joined as a table, watch/events.ts hitEvents) passes transformQuery on
  // its own too but is never run: only a query that returns a result is recorded.
  const built = new Map<unknown, CompiledQuery>();
  const plugin: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      built.set(queryId, s.db.getExecutor().compileQuery(node, queryId));
      return node;
    },
    transformResult: async ({ queryId, result }) => {
      const query = built.get(queryId);
      built.delete(queryId);
      if (query) queries.push(query);
      return result;
    },
  };
  return { store: Object.create(s, { db: { value: s.db.withPlugin(plugin) } }) as Store, queries };
}
