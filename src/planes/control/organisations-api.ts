import type { Router } from '../../http/router.ts';
import { parseOrganisation } from '../../core/organisations/organisation-input.ts';
import type { OrganisationView } from '../../core/model.ts';
import type { GatewayContext } from '../context.ts';
import { callerOf, type Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { idParam, listOf, notFound, STRINGS, WRITE_REFUSALS } from './resource-docs.ts';

const CAPABILITY = 'app-admin';
const HOURS = {
  type: ['object', 'null'],
  description: 'null: always open. Members\' requests outside every window are refused (outside-hours).',
  properties: {
    timezone: { type: 'string', description: 'IANA zone the windows are read in' },
    windows: { type: 'array', items: { type: 'object', properties: { days: { ...STRINGS, description: 'MON … SUN' }, from: { type: 'string', description: 'HH:MM' }, to: { type: 'string', description: 'HH:MM, exclusive; 24:00 allowed; earlier than from spans midnight' } } } },
  },
} as const;
/** The hours as answered: every member is there (the body's are checked by parseOrganisation). */
const HOURS_ANSWERED = {
  ...HOURS,
  required: ['timezone', 'windows'],
  properties: { ...HOURS.properties, windows: { ...HOURS.properties.windows, items: { ...HOURS.properties.windows.items, required: ['days', 'from', 'to'] } } },
} as const;
const ORGANISATION = { type: 'object', required: ['id', 'name', 'hours'], properties: { id: { type: 'string' }, name: { type: 'string' }, hours: HOURS_ANSWERED } } as const;

const body = (o: OrganisationView) => ({ id: o.id, name: o.name, hours: o.hours });

export function addOrganisationsApi(router: Router<Principal>, gw: GatewayContext): void {
  const find = (id: string) => {
    const o = gw.config.view.organisations.get(id);
    if (!o) throw notFound('organisation', id);
    return o;
  };

  router.add('GET', '/api/organisations', {
    summary: 'List organisations', tags: ['organisations'], auth: 'session',
    responses: { 200: { description: 'every organisation', schema: listOf('organisations', ORGANISATION) } },
  }, (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    return { body: { organisations: [...gw.config.view.organisations.values()].map(body) } };
  });

  router.add('GET', '/api/organisations/{id}', {
    summary: 'One organisation', tags: ['organisations'], auth: 'session',
    responses: { 200: { description: 'the organisation', schema: ORGANISATION }, 404: { description: 'no such organisation' } },
  }, (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    return { body: body(find(idParam(ctx.params, 'organisation'))) };
  });

  router.add('PUT', '/api/organisations/{id}', {
    summary: 'Create or replace an organisation', tags: ['organisations'], auth: 'session',
    body: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: { type: 'string' }, hours: HOURS } },
    responses: { 200: { description: 'replaced', schema: ORGANISATION }, 201: { description: 'created', schema: ORGANISATION }, ...WRITE_REFUSALS },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const input = parseOrganisation(idParam(ctx.params, 'organisation'), await ctx.json());
    const { created } = await gw.config.call('organisation.put', input, callerOf(gw, ctx.principal, ctx.ex));
    return { status: created ? 201 : 200, body: body(find(input.id)), ...(created ? { headers: { location: `/api/organisations/${input.id}` } } : {}) };
  });

  router.add('DELETE', '/api/organisations/{id}', {
    summary: 'Delete an organisation and its vault', tags: ['organisations'], auth: 'session',
    responses: { 204: { description: 'deleted' }, 404: { description: 'no such organisation' }, 409: { description: 'members, routes, or schedules that may still act for it remain (organisation.in-use)' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, CAPABILITY);
    const id = idParam(ctx.params, 'organisation');
    if (!(await gw.config.call('organisation.delete', { id }, callerOf(gw, ctx.principal, ctx.ex)))) throw notFound('organisation', id);
    return { status: 204 };
  });
}
