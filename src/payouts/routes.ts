import { z } from 'zod';
import { HttpError, notFound } from '../api/http.js';
import { route, type RouteDef } from '../api/router.js';
import { okSchema } from '../api/schemas.js';
import { noChange } from '../api/audit.js';
import { createPayoutBody, PAYOUT_STATUSES, payoutSchema, submitTransactionBody } from '../wire/payouts.js';
import { approve, cancel } from './actions.js';
import { callerOf } from './approval.js';
import { createPayout } from './create.js';
import { watchesAdded } from './context.js';
import { presentPayout } from './present.js';
import { linesOf, listPayouts, payoutOf, PayoutError, type PayoutRow } from './rows.js';
import { psbtFor, submitTransaction } from './submit.js';
import type { Payouts } from './service.js';
import type { PresentDeps } from './present.js';

const TAG = 'Payouts';
/** QR codes are drawn for payouts of up to this many lines (a batch of 1,000 would be megabytes of SVG). */
export const QR_LINES = 20;

export interface PayoutRouteDeps {
  payouts: Payouts;
  present: PresentDeps;
}

const idParam = z.object({ payout_id: z.string().regex(/^(po|rf)_[A-Za-z0-9_-]{16}$/, 'must be a payout id (po_...) or refund id (rf_...)') });
const listQuery = z.object({
  status: z.enum(PAYOUT_STATUSES, { error: `must be one of ${PAYOUT_STATUSES.join(', ')}` }).optional(),
  page: z.string().regex(/^[1-9]\d{0,8}$/, 'must be a positive integer').optional(),
  per_page: z.string().regex(/^\d+$/, 'must be an integer from 1 to 200').refine((v) => Number(v) >= 1 && Number(v) <= 200, 'must be an integer from 1 to 200').optional(),
});
const payoutAnswer = okSchema.extend({ payout: payoutSchema });

async function found(app: { store: PresentDeps['store'] }, accountId: number, payoutId: string): Promise<PayoutRow> {
  const p = await payoutOf(app.store.db, accountId, payoutId);
  if (!p) throw notFound('Payout not found');
  return p;
}

async function answer(deps: PayoutRouteDeps, p: PayoutRow) {
  const lines = await linesOf(deps.present.store.db, p.id);
  return { ok: true as const, payout: await presentPayout(deps.present, p, lines, { withLines: true, qr: lines.length <= QR_LINES }) };
}

export function payoutRoutes(deps: PayoutRouteDeps): RouteDef[] {
  return [createRoute(deps), listRoute(deps), oneRoute(deps), approveRoute(deps), cancelRoute(deps), submitRoute(deps), psbtRoute(deps)];
}

function createRoute(deps: PayoutRouteDeps): RouteDef {
  return route({
    method: 'POST', path: '/v1/payouts', operationId: 'createPayout', tag: TAG,
    summary: 'Create a payout of up to 1,000 lines (a developer\'s, or one above payouts_approval_over, waits for an owner\'s approval)',
    body: createPayoutBody, errors: [400], response: payoutAnswer,
    audit: {
      action: 'payout.create',
      describe: ({ body, result }) => ({
        type: 'payout', id: result.payout.payout_id,
        changes: { lines: body.lines.length, networks: [...new Set(body.lines.map((l) => l.network))], approval: result.payout.approval, fiat_total: result.payout.fiat_total },
      }),
    },
    async handler({ account, app, key, body }) {
      const caller = await callerOf(app.store, key);
      const created = await createPayout({ store: app.store, config: app.config, rates: deps.payouts.rates, accountId: account.id, caller }, body);
      await watchesAdded(deps.payouts.deps, created.watches);
      deps.payouts.deps.onDeliveries();
      return answer(deps, created.payout);
    },
  });
}

function listRoute(deps: PayoutRouteDeps): RouteDef {
  return route({
    method: 'GET', path: '/v1/payouts', operationId: 'listPayouts', tag: TAG, summary: 'List payouts, newest first (paginated; lines in GET /v1/payouts/{payout_id})',
    query: listQuery, errors: [400],
    response: okSchema.extend({ payouts: z.array(payoutSchema), page: z.number().int(), per_page: z.number().int(), total: z.number().int() }),
    async handler({ account, app, query }) {
      const page = Number(query.page ?? 1);
      const perPage = Number(query.per_page ?? 50);
      const { rows, total } = await listPayouts(app.store.db, { accountId: account.id, status: query.status, page, perPage });
      const payouts = await Promise.all(rows.map(async (p) => presentPayout(deps.present, p, await linesOf(app.store.db, p.id), { withLines: false, qr: false })));
      return { ok: true, payouts, page, per_page: perPage, total };
    },
  });
}

function oneRoute(deps: PayoutRouteDeps): RouteDef {
  return route({
    method: 'GET', path: '/v1/payouts/{payout_id}', operationId: 'getPayout', tag: TAG,
    summary: `One payout (or refund) with its lines and their payment requests (QR codes up to ${QR_LINES} lines)`,
    params: idParam, errors: [400, 404], response: payoutAnswer,
    async handler({ account, app, params }) {
      return answer(deps, await found(app, account.id, params.payout_id));
    },
  });
}

function approveRoute(deps: PayoutRouteDeps): RouteDef {
  return route({
    method: 'POST', path: '/v1/payouts/{payout_id}/approve', operationId: 'approvePayout', tag: TAG,
    summary: 'Approve a payout or refund waiting for it (an owner other than its maker); its payment requests are shown from now',
    params: idParam, errors: [400, 403, 404, 409], role: 'owner', response: payoutAnswer,
    audit: { action: 'payout.approve', describe: ({ params }) => ({ type: 'payout', id: params.payout_id }) },
    async handler({ account, app, key, params }) {
      const p = await found(app, account.id, params.payout_id);
      const caller = await callerOf(app.store, key);
      if (p.approval === 'awaiting' && caller.id === p.created_by) {
        throw new HttpError(403, `${p.payout_id} was made by ${p.created_by_label}: a second owner must approve it`);
      }
      const changed = await approve(deps.payouts.deps, p, caller);
      const result = await answer(deps, (await payoutOf(app.store.db, account.id, p.payout_id))!);
      return changed ? result : noChange(result);
    },
  });
}

function cancelRoute(deps: PayoutRouteDeps): RouteDef {
  return route({
    method: 'POST', path: '/v1/payouts/{payout_id}/cancel', operationId: 'cancelPayout', tag: TAG,
    summary: 'Cancel the lines of a payout or refund nothing was paid to yet (a developer: only one still waiting for approval)',
    params: idParam, errors: [400, 403, 404, 409], response: payoutAnswer,
    audit: { action: 'payout.cancel', describe: ({ params }) => ({ type: 'payout', id: params.payout_id }) },
    async handler({ account, app, key, params }) {
      const p = await found(app, account.id, params.payout_id);
      if (key.role !== 'owner' && p.approval !== 'awaiting') throw new HttpError(403, `Only an owner cancels an approved payout; ${p.payout_id} is ${p.approval === 'approved' ? 'approved' : 'live'}`);
      const n = await cancel(deps.payouts.deps, p, Date.now(), key.role !== 'owner');
      const result = await answer(deps, (await payoutOf(app.store.db, account.id, p.payout_id))!);
      if (n === 0 && result.payout.status !== 'canceled') throw new PayoutError('E_CONFLICT', `${p.payout_id}: every line has money on the way or arrived; nothing to cancel`);
      return n === 0 ? noChange(result) : result;
    },
  });
}

function submitRoute(deps: PayoutRouteDeps): RouteDef {
  return route({
    method: 'POST', path: '/v1/payouts/{payout_id}/transaction', operationId: 'submitPayoutTransaction', tag: TAG,
    summary: 'A signed transaction paying the lines: checked against them (address, asset, amount), broadcast, its hash recorded',
    params: idParam, body: submitTransactionBody, errors: [400, 404, 409], role: 'owner', response: payoutAnswer.extend({ tx_hash: z.string() }),
    audit: { action: 'payout.transaction', describe: ({ params, result }) => ({ type: 'payout', id: params.payout_id, changes: { tx_hash: result.tx_hash } }) },
    async handler({ account, app, params, body }) {
      const p = await found(app, account.id, params.payout_id);
      const txHash = await submitTransaction(deps.payouts, p, body);
      return { ...(await answer(deps, (await payoutOf(app.store.db, account.id, p.payout_id))!)), tx_hash: txHash };
    },
  });
}

function psbtRoute(deps: PayoutRouteDeps): RouteDef {
  return route({
    method: 'GET', path: '/v1/payouts/{payout_id}/psbt', operationId: 'getPayoutPsbt', tag: TAG,
    summary: 'An unsigned BIP174 PSBT paying the lines awaiting payment from coins of paid orders (UTXO networks with an xpub)',
    params: idParam, query: z.object({ fee_rate: z.string().regex(/^\d{1,6}(\.\d{1,3})?$/, 'must be sat/vB, e.g. "5" or "2.5"').optional() }), errors: [400, 403, 404, 409],
    // A GET that writes: it reserves a change index and keeps the coins with the payout, so it
    // is preparing the payout (a developer's right), not reading it (a viewer's).
    role: 'developer',
    response: okSchema.extend({ psbt: z.string().meta({ description: 'base64' }), fee_raw: z.string().nullable() }),
    async handler({ account, app, params, query }) {
      const p = await found(app, account.id, params.payout_id);
      return { ok: true, ...(await psbtFor(deps.payouts, p, query.fee_rate === undefined ? undefined : Number(query.fee_rate))) };
    },
  });
}
