/**
 * Settings root changes at run time and every node reads: for now the scheduler's history
 * retention (spec 1.1 rules 21 and 36). `GET /api/settings/schedules` answers the console
 * (app-admin reads it), `PUT` is root's alone and sweeps at once with the new value.
 */
import type { Router } from '../../http/router.ts';
import { formatRetention, parseSchedulesSettings } from '../../core/schedules/retention.ts';
import type { SchedulesSettingsRecord } from '../../actors/schedules/messages.ts';
import type { GatewayContext } from '../context.ts';
import { principalLabel, type Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { seconds, WRITE_REFUSALS } from './resource-docs.ts';
import { recordChange } from '../shared/audit-note.ts';

const SETTINGS = {
  type: 'object',
  properties: {
    retention: { type: 'string', description: 'how long run history and finished delayed actions are kept: ISO 8601 days or weeks, P1D to P1825D; default P30D' },
    updatedAt: { type: ['integer', 'null'], description: 'epoch seconds; null while the default holds' },
    updatedBy: { type: ['string', 'null'], description: 'account:<name> or token:<name>' },
  },
} as const;

const answer = (r: SchedulesSettingsRecord) => ({
  retention: formatRetention(r.retentionMs), updatedAt: r.updatedAt === null ? null : seconds(r.updatedAt), updatedBy: r.updatedBy,
});

export function addSettingsApi(router: Router<Principal>, gw: GatewayContext): void {
  const tags = ['settings'];
  router.add('GET', '/api/settings/schedules', {
    summary: 'The scheduler settings (history retention)', tags, auth: 'session',
    responses: { 200: { description: 'the settings', schema: SETTINGS } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'app-admin');
    return { body: answer(await gw.schedules.call('settings.get', null)) };
  });

  router.add('PUT', '/api/settings/schedules', {
    summary: 'Set the history retention (root); older history is swept at once', tags, auth: 'session',
    body: { type: 'object', required: ['retention'], additionalProperties: false, properties: { retention: SETTINGS.properties.retention } },
    responses: { 200: { description: 'the settings as stored', schema: SETTINGS }, ...WRITE_REFUSALS },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'root');
    const { retentionMs } = parseSchedulesSettings(await ctx.json());
    const by = principalLabel(ctx.principal);
    const before = await gw.schedules.call('settings.get', null);
    const stored = await gw.schedules.call('settings.put', { retentionMs, by });
    recordChange(gw, ctx, {
      action: 'settings.update', target: { kind: 'settings', id: 'schedules', name: 'schedules' },
      before: { retention: formatRetention(before.retentionMs) }, after: { retention: formatRetention(stored.retentionMs) },
    });
    gw.log.info('scheduler history retention changed', { retention: formatRetention(retentionMs), by });
    return { body: answer(stored) };
  });
}
