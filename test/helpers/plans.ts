import type { CompiledQuery, KyselyPlugin } from 'kysely';
import type { Store } from '../../src/store/index.js';

/** The store as `s`, recording the SQL of every query run through it (to check their plans). */
export function capturing(s: Store): { store: Store; queries: CompiledQuery[] } {
  const queries: CompiledQuery[] = [];
  const plugin: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      queries.push(s.db.getExecutor().compileQuery(node, queryId));
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  return { store: Object.create(s, { db: { value: s.db.withPlugin(plugin) } }) as Store, queries };
}
