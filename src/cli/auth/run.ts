import type { CommandImpl } from '../action.js';
import { clientFor, NOT_RUNNING_HINT, resolveCredentials } from '../context.js';
import { CliError, EXIT } from '../io.js';
import { Output } from '../output.js';

export const status: CommandImpl = async (io, opts) => {
  const creds = await resolveCredentials(io, opts);
  const out = new Output(io, opts);
  const api = await clientFor(creds, io, opts);
  let account: Awaited<ReturnType<typeof api.account>> | undefined;
  let failure: { message: string; exitCode: number } | undefined;
  try {
    account = await api.account();
  } catch (err) {
    const e = err as { name?: string; status?: number; message?: string };
    failure = { message: `${e.message ?? String(err)}${e.name === 'NetworkError' ? ` ${NOT_RUNNING_HINT}` : ''}`, exitCode: e.name === 'ApiError' && (e.status === 401 || e.status === 403) ? EXIT.auth : EXIT.error };
  } finally {
    await api.close();
  }
  const source = creds.profile === null ? 'environment (PUBLIC_API_KEY, PUBLIC_API_SECRET)' : `profile "${creds.profile}"`;
  if (out.json) {
    out.printJson({
      profile: creds.profile, base_url: creds.baseUrl, api_key_prefix: creds.apiKey.slice(0, 8), ok: failure === undefined,
      user_id: account?.user_id ?? null, plan: account?.plan?.slug ?? null, error: failure?.message ?? null,
    });
  } else {
    out.fields([
      ['credentials', source],
      ['base url', creds.baseUrl],
      ['api key', `${creds.apiKey.slice(0, 8)}…`],
      failure ? ['status', `not working: ${failure.message}`, 'red'] : ['status', 'working', 'green'],
      ...(account ? [['account', account.user_id] as [string, number], ['plan', account.plan ? `${account.plan.name} (${account.plan.slug})` : '(none)'] as [string, string]] : []),
    ]);
  }
  // The status is printed either way; the exit code tells scripts which way it went.
  if (failure) throw new CliError(out.json ? failure.message : '', failure.exitCode);
};
