import type { ApiClient } from '../client/api-client.js';
import { ApiError } from '../client/errors.js';
import type { Endpoint } from '../client/types.js';
import { CliError } from './io.js';

/**
 * An endpoint named on the command line by numeric id, uuid or name. Ids go straight to
 * `GET /v1/endpoints/{id}`; uuids and names are looked up in the list.
 */
export async function resolveEndpoint(api: ApiClient, ref: string): Promise<Endpoint> {
  if (/^\d+$/.test(ref)) {
    try {
      return (await api.getEndpoint(Number(ref))).endpoint;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw new CliError(`endpoint ${ref} not found (see: rpcctl endpoints list)`);
      throw err;
    }
  }
  const { endpoints } = await api.listEndpoints();
  const byUuid = endpoints.find((e) => e.uuid.toLowerCase() === ref.toLowerCase());
  if (byUuid) return byUuid;
  const byName = endpoints.filter((e) => e.name === ref);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) throw new CliError(`${byName.length} endpoints are named "${ref}" (ids ${byName.map((e) => e.id).join(', ')}): give the id`);
  throw new CliError(`no endpoint with id, uuid or name "${ref}" (see: rpcctl endpoints list)`);
}
