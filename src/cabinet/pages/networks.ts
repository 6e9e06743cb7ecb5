import { envIdentifier, type Catalog } from '../../store/index.js';

/** Address Watch identifiers (`eth`, `eth-sepolia`) with readable labels, in catalog order. */
export function watchNetworks(catalog: Catalog): Array<{ id: string; label: string; family: string }> {
  return catalog.networks.flatMap((n) => n.environments.map((e) => ({ id: envIdentifier(e), label: `${n.name} ${e.slug}`, family: n.family })));
}
