/**
 * Settings root changes at run time and every node reads: the scheduler's history retention
 * (spec 1.1 rules 21 and 36) and the schedules one token may hold. `GET /api/settings/schedules`
 * answers the console (app-admin reads it), `PUT` is root's alone, changes the fields it is given
 * and sweeps at once with the retention.
 */
import type { Router } from '../../http/router.ts';
import { DEFAULT_PER_TOKEN, formatRetention, MAX_PER_TOKEN, parseSchedulesSettings } from '../../core/schedules/scheduler-settings.ts';
import type { SchedulesSettingsRecord } from '../../actors/schedules/messages.ts';
import type { GatewayContext } from '../context.ts';
import { principalLabel, type Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { seconds, WRITE_REFUSALS } from './resource-docs.ts';
import { recordChange } from '../shared/audit-note.ts';

const SETTINGS = {
  type: 'object',
  required: ['retention', 'maxSchedules', 'updatedAt', 'updatedBy'],
  properties: {
    retention: { type: 'string', description: 'how long run history and finished delayed actions are kept: ISO 8601 days or weeks, P1D to P1825D; default P30D' },
    maxSchedules: { type: 'integer', minimum: 1, maximum: MAX_PER_TOKEN, description: `schedules one schedules token may hold, finished delayed actions not counted; a write past it answers 409 schedule.too-many; default ${DEFAULT_PER_TOKEN}` },
    updatedAt: { type: ['integer', 'null'], description: 'epoch seconds; null while the default holds' },
    updatedBy: { type: ['string', 'null'], description: 'account:<name> or token:<name>' },
  },
} as const;

const answer = (r: SchedulesSettingsRecord) => ({
  retention: formatRetention(r.retentionMs), maxSchedules: r.perToken, updatedAt: r.updatedAt === null ? null : seconds(r.updatedAt), updatedBy: r.updatedBy,
});

export function addSettingsApi(router: Router<Principal>, gw: GatewayContext): void {
  const tags = ['settings'];
  router.add('GET', '/api/settings/schedules', {
    summary: 'The scheduler settings (history retention, schedules per token)', tags, auth: 'session',
    responses: { 200: { description: 'the settings', schema: SETTINGS } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'app-admin');
    return { body: answer(await gw.schedules.call('settings.get', null)) };
  });

  router.add('PUT', '/api/settings/schedules', {
    summary: 'Change the scheduler settings (root); a field left out keeps its value; older history is swept at once', tags, auth: 'session',
    body: { type: 'object', minProperties: 1, additionalProperties: false, properties: { retention: SETTINGS.properties.retention, maxSchedules: SETTINGS.properties.maxSchedules } },
    responses: { 200: { description: 'the settings as stored', schema: SETTINGS }, ...WRITE_REFUSALS },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'root');
    const change = parseSchedulesSettings(await ctx.json());
    const by = principalLabel(ctx.principal);
    const before = await gw.schedules.call('settings.get', null);
    const stored = await gw.schedules.call('settings.put', { ...change, by });
    const shown = (r: SchedulesSettingsRecord) => ({ retention: formatRetention(r.retentionMs), maxSchedules: r.perToken });
    recordChange(gw, ctx, { action: 'settings.update', target: { kind: 'settings', id: 'schedules', name: 'schedules' }, before: shown(before), after: shown(stored) });
    gw.log.info('scheduler settings changed', { ...shown(stored), by });
    return { body: answer(stored) };
  });
}
