/**
 * The scheduling API (spec 4.1). On the internal plane it answers schedules tokens, each seeing
 * only the schedules it wrote. On the control plane the console (root, app-admin) reads and acts
 * on every schedule (list, get, runs, pause, resume, run, replay, delete) but does not write
 * one: creation, replacement and run reports belong to the internal plane. A schedules token
 * still calling the control plane keeps working (spec 9 rule 1), and the gateway says once per
 * token where its door is now.
 */
import { GatewayError, invalidField } from '../../http/errors.ts';
import type { ApiReply, RequestContext, Router } from '../../http/router.ts';
import { parseSchedule, type ScheduleInput } from '../../core/schedules/schedule-input.ts';
import { parseFilters } from '../../core/schedules/filters.ts';
import { parseReport } from '../../core/schedules/run-report.ts';
import { objectBody } from '../../core/validate.ts';
import type { Owner, ScheduleWrite } from '../../actors/schedules/messages.ts';
import type { GatewayContext } from '../context.ts';
import { principalLabel, type Principal } from '../principal.ts';
import { requireCapability } from '../control/auth.ts';
import { SCHEDULE_DOC, RUN_DOC } from './schedules-docs.ts';
import { recordChange } from './audit-note.ts';
import { cursorCodec, nextLink, readPageQuery } from '../../http/cursor.ts';

type Plane = 'internal' | 'control';
type Ctx = RequestContext<Principal>;

/** The console lists every schedule of a deployment: a generous page keeps that to few calls. */
const SCHEDULES_PAGE = { max: 1000, fallback: 500 };
const RUNS_PAGE = { max: 500, fallback: 50 };
const pageLimit = (page: { max: number; fallback: number }) => ({ type: 'integer', minimum: 1, maximum: page.max, default: page.fallback }) as const;
/** A schedule's place in the list: createdAt (epoch ms), then id. */
const SCHEDULES_CURSOR = cursorCodec('schedules', ['integer', 'string']);
/** A run record's history id. */
const RUNS_CURSOR = cursorCodec('runs', ['string']);

const PAGING_DOC = (p: { max: number; fallback: number }) =>
  `Answers a JSON array of at most limit items (1-${p.max}, default ${p.fallback}). When more remain, a Link: <…>; rel="next" header gives the next page's address as a relative reference (path and query), to resolve against the address called; its cursor is opaque. No Link: the last page.`;

/** A page as the lists answer it: the array, and the next page's address when more remain. */
function paged(path: string, ctx: Ctx, items: readonly unknown[], cursor: string | null): ApiReply {
  return { body: items, ...(cursor !== null ? { headers: { link: nextLink(path, ctx.query, cursor) } } : {}) };
}

function scheduleToken(p: Principal): { id: string; name: string; routes: readonly string[]; roles: readonly string[]; organisations: readonly string[] } | undefined {
  return p.kind === 'token' && p.token.kind === 'schedules'
    ? { id: p.token.id, name: p.token.name, routes: p.token.routes ?? [], roles: p.token.roles ?? [], organisations: p.token.organisations ?? [] }
    : undefined;
}

export function addSchedulesApi(router: Router<Principal>, gw: GatewayContext, plane: Plane): void {
  const warned = new Set<string>();
  const auth = plane === 'internal' ? 'token' as const : 'session' as const;

  /** Whose schedules the caller sees; refuses callers who may not use this API here. */
  const ownerOf = (ctx: Ctx): Owner => {
    const token = scheduleToken(ctx.principal);
    if (token) {
      if (plane === 'control' && !warned.has(token.id)) {
        warned.add(token.id);
        gw.log.warn('a schedules token called the scheduling API on the control plane; it keeps working, but its door is now the internal plane', {
          token: token.name, tokenId: token.id, path: ctx.ex.path, internalPlane: gw.doorAddress('internal'),
        });
      }
      return token.id;
    }
    requireCapability(ctx.principal, 'app-admin');
    return null;
  };

  /** Writes come from a schedules token; the console is sent to the internal plane. */
  const writer = (ctx: Ctx) => {
    const token = scheduleToken(ctx.principal);
    if (!token) {
      throw new GatewayError('wrong-plane', `Schedules are written by backends on the internal plane (${gw.doorAddress('internal')}) with a schedules token; the console reads them and can pause, resume, run, replay and delete them.`);
    }
    return token;
  };

  /**
   * What depends on the configuration: the route, the path on it, the perimeter, the organisation.
   * The perimeter is judged before existence, so a token learns nothing of routes and organisations
   * outside it (spec 5 rule 2): one it may not reach is refused alike whether it exists or not.
   */
  const check = (input: ScheduleInput, token: NonNullable<ReturnType<typeof scheduleToken>>): ScheduleWrite => {
    const view = gw.config.view;
    const reaches = (id: string) => token.routes.includes('*') || token.routes.includes(id);
    if (!reaches(input.routeId)) {
      throw new GatewayError('perimeter', `The token "${token.name}" may not reach the route "${input.routeId}"; its routes are ${token.routes.join(', ') || 'none'}.`, 'routeId');
    }
    const route = view.routesById.get(input.routeId);
    if (!route) throw new GatewayError('schedule.route-unknown', `No route has the id "${input.routeId}".`, 'routeId');
    const allowed = new Set(view.roles.expand(token.roles));
    const outside = view.roles.expand(input.roles).filter((r) => !allowed.has(r));
    if (outside.length > 0) {
      throw new GatewayError('perimeter', `The token "${token.name}" may not ask for ${outside.map((r) => `"${r}"`).join(', ')}; it may ask for ${[...allowed].join(', ') || 'no role'}.`, 'roles');
    }
    const pathOnly = input.path.split('?')[0]!;
    // The call is routed among every route, as a request is: a longer prefix of another route takes the path.
    const served = view.routeTable.match(route.hosts[0], pathOnly);
    if (served?.route.id !== route.id) {
      const other = served === undefined ? '' : reaches(served.route.id) ? `; the route "${served.route.id}" serves it` : '; another route serves it';
      throw new GatewayError('schedule.path-invalid', `The path ${pathOnly} is not served by the route "${route.id}" (its paths are ${route.paths.join(', ')}${other}).`, 'path');
    }
    // Acting for an organisation reads its vault and carries its membership: the token must be given it.
    if (input.organisation !== null && !token.organisations.includes('*') && !token.organisations.includes(input.organisation)) {
      throw new GatewayError('perimeter', `The token "${token.name}" may not act for the organisation "${input.organisation}"; its organisations are ${token.organisations.join(', ') || 'none'}.`, 'organisation');
    }
    if (input.organisation !== null && !view.organisations.has(input.organisation)) {
      throw new GatewayError('organisation.unknown', `The organisation "${input.organisation}" does not exist.`, 'organisation');
    }
    const { cadence: _parsed, ...write } = input;
    return write;
  };

  /**
   * A console action on a schedule is a change of the control plane and goes to the trail; the
   * backends' own writes on the internal plane are their business, recorded in the run history.
   */
  const consoleAction = (ctx: Ctx, action: string, s: { id: string; organisation?: string | null }, detail: string) => {
    if (plane !== 'control' || scheduleToken(ctx.principal)) return;
    recordChange(gw, ctx, { action, target: { kind: 'schedule', id: s.id, name: s.id }, organisation: s.organisation ?? null, detail });
  };

  const notFound = (id: string) => new GatewayError('not-found', `No schedule with the id "${id}" is yours to see.`);
  const id = (ctx: Ctx) => ctx.params.id ?? '';
  const base = '/api/schedules';
  const tags = ['schedules'];

  router.add('POST', base, {
    summary: 'Create a schedule', tags, auth, body: SCHEDULE_DOC.body,
    description: plane === 'internal' ? 'The next turn (nextRunAt) is computed now.' : 'Refused on the control plane (wrong-plane), except for a schedules token still calling it.',
    responses: { 201: { description: 'created', schema: SCHEDULE_DOC.schedule }, 400: { description: 'a field is refused, with its code' }, 403: { description: 'outside the token\'s perimeter, or the wrong plane' }, 404: { description: 'no such route (schedule.route-unknown)' }, 409: { description: 'the token holds as many schedules as it may (schedule.too-many, maxSchedules of GET /api/settings/schedules)' } },
  }, async (ctx) => {
    const token = writer(ctx);
    ownerOf(ctx);
    const input = check(parseSchedule(await ctx.json()), token);
    const created = await gw.schedules.call('schedule.create', { input, token: { id: token.id, name: token.name } });
    return { status: 201, headers: { location: `${base}/${created.id}` }, body: created };
  });

  router.add('GET', base, {
    summary: 'List schedules', tags, auth,
    description: `Oldest first (createdAt, then id). Filters, all of which must hold: meta.<key>=<value>, meta.<key>=~<expression>, tenant (organisation), route. ${PAGING_DOC(SCHEDULES_PAGE)}`,
    query: { 'meta.<key>': '<value>, or ~<regular expression>: the schedule\'s metadata', tenant: 'an organisation id', route: 'a route id', limit: `1 to ${SCHEDULES_PAGE.max} (default ${SCHEDULES_PAGE.fallback})`, cursor: 'from the Link header of the page before' },
    schemas: { limit: pageLimit(SCHEDULES_PAGE) },
    responses: { 200: { description: 'a JSON array of schedules; Link: <…>; rel="next" when more remain', schema: { type: 'array', items: SCHEDULE_DOC.schedule }, headers: { Link: '<the next page>; rel="next", when more remain: the only way to the next page' } }, 400: { description: 'a filter does not compile, or could backtrack without bound: a repeated group holding a repetition or an alternation, a back-reference, a look-around (filter.regex-invalid) or is unknown (filter.invalid); limit out of range (field.invalid); a cursor this list did not give (cursor.invalid)' } },
  }, async (ctx) => {
    const owner = ownerOf(ctx);
    const filters = parseFilters(ctx.query, ['limit', 'cursor']);
    const { limit, after } = readPageQuery(ctx.query, SCHEDULES_CURSOR, SCHEDULES_PAGE);
    const page = await gw.schedules.call('schedule.list', { owner, filters, limit, after: after && { createdAt: after[0], id: after[1] } });
    return paged(base, ctx, page.items, page.next && SCHEDULES_CURSOR.encode([page.next.createdAt, page.next.id]));
  });

  router.add('GET', `${base}/{id}`, {
    summary: 'One schedule', tags, auth,
    responses: { 200: { description: 'the schedule', schema: SCHEDULE_DOC.schedule }, 404: { description: 'no such schedule within the caller\'s perimeter' } },
  }, async (ctx) => {
    const s = await gw.schedules.call('schedule.get', { id: id(ctx), owner: ownerOf(ctx) });
    if (!s) throw notFound(id(ctx));
    return { body: s };
  });

  router.add('PUT', `${base}/{id}`, {
    summary: 'Replace a schedule', tags, auth, body: SCHEDULE_DOC.body,
    description: 'Every writable field is replaced (omitted ones take their defaults); id, history and the paused state stay. The next turn is computed again.',
    responses: { 200: { description: 'replaced', schema: SCHEDULE_DOC.schedule }, 400: { description: 'a field is refused' }, 403: { description: 'perimeter or wrong plane' }, 404: { description: 'no such schedule, or no such route' }, 409: { description: 'a finished delayed action would fire again and the token holds as many schedules as it may (schedule.too-many)' } },
  }, async (ctx) => {
    const token = writer(ctx);
    const owner = ownerOf(ctx);
    const input = check(parseSchedule(await ctx.json()), token);
    const s = await gw.schedules.call('schedule.replace', { id: id(ctx), owner, input });
    if (!s) throw notFound(id(ctx));
    return { body: s };
  });

  router.add('DELETE', `${base}/{id}`, {
    summary: 'Delete a schedule and its history', tags, auth,
    responses: { 204: { description: 'deleted' }, 404: { description: 'no such schedule' } },
  }, async (ctx) => {
    const owner = ownerOf(ctx);
    const s = await gw.schedules.call('schedule.get', { id: id(ctx), owner });
    if (!s || !(await gw.schedules.call('schedule.delete', { id: id(ctx), owner }))) throw notFound(id(ctx));
    consoleAction(ctx, 'schedule.delete', s, 'deleted, with its history');
    return { status: 204 };
  });

  for (const action of ['pause', 'resume'] as const) {
    router.add('POST', `${base}/{id}/${action}`, {
      summary: action === 'pause' ? 'Stop it firing' : 'Let it fire again', tags, auth,
      responses: { 200: { description: 'the schedule', schema: SCHEDULE_DOC.schedule }, 404: { description: 'no such schedule' }, 409: { description: 'resume of a schedule stopped because its token was revoked (schedule.stopped)' } },
    }, async (ctx) => {
      const done = await gw.schedules.call(`schedule.${action}`, { id: id(ctx), owner: ownerOf(ctx) });
      if (!done) throw notFound(id(ctx));
      // Pausing what is paused moves nothing: answered the same, no line (an empty change, rule 3).
      if (done.moved) consoleAction(ctx, `schedule.${action}`, done.schedule, action === 'pause' ? 'paused' : 'resumed');
      return { body: done.schedule };
    });
  }

  router.add('POST', `${base}/{id}/run`, {
    summary: 'Run now, or replay a turn', tags, auth,
    description: 'Without a body the next turn is brought forward to now. With {"replayOf": "<run record id>"} a failed, lost or dropped turn goes out again as a new run, with the payload as the schedule stands now. 409 while a run is in flight.',
    body: { type: 'object', additionalProperties: false, properties: { replayOf: { type: 'string' } } }, bodyOptional: true,
    responses: { 202: { description: 'the request is recorded; the engine takes it', schema: SCHEDULE_DOC.schedule }, 404: { description: 'no such schedule' }, 409: { description: 'a run is in flight (in-flight), or the schedule is stopped because its token was revoked (schedule.stopped)' } },
  }, async (ctx) => {
    const owner = ownerOf(ctx);
    const body = await ctx.json();
    let replayOf: string | null = null;
    if (body !== undefined && body !== null) {
      const f = objectBody(body, ['replayOf'], 'a run request');
      if (f.replayOf !== undefined) {
        if (typeof f.replayOf !== 'string' || f.replayOf === '') throw invalidField('replayOf', 'replayOf must be the id of a turn in the history (run-…).');
        replayOf = f.replayOf;
      }
    }
    const by = principalLabel(ctx.principal);
    const s = await gw.schedules.call('schedule.run', { id: id(ctx), owner, replayOf, by });
    if (!s) throw notFound(id(ctx));
    consoleAction(ctx, replayOf ? 'schedule.replay' : 'schedule.run', s, replayOf ? `replay of ${replayOf}` : 'run now');
    return { status: 202, body: s };
  });

  router.add('GET', `${base}/{id}/runs`, {
    summary: 'Run history, newest first', tags, auth,
    description: PAGING_DOC(RUNS_PAGE),
    query: { limit: `1 to ${RUNS_PAGE.max} (default ${RUNS_PAGE.fallback})`, cursor: 'from the Link header of the page before' },
    schemas: { limit: pageLimit(RUNS_PAGE) },
    responses: { 200: { description: 'a JSON array of run records; Link: <…>; rel="next" when more remain', schema: { type: 'array', items: RUN_DOC }, headers: { Link: '<the next page>; rel="next", when more remain: the only way to the next page' } }, 400: { description: 'limit out of range (field.invalid), or a cursor this list did not give (cursor.invalid)' }, 404: { description: 'no such schedule' } },
  }, async (ctx) => {
    const owner = ownerOf(ctx);
    // A parameter the history does not read would be a page that looks right and is not.
    for (const name of ctx.query.keys()) {
      if (name === 'before') throw invalidField(name, 'before is no longer read: it skipped runs that ended within the same second. Follow the Link header of each page (its cursor) instead.');
      if (name !== 'limit' && name !== 'cursor') throw invalidField(name, `"${name}" is not a parameter of the run history; it takes limit and cursor.`);
    }
    const { limit, after } = readPageQuery(ctx.query, RUNS_CURSOR, RUNS_PAGE);
    const page = await gw.schedules.call('schedule.runs', { id: id(ctx), owner, limit, after: after && after[0] });
    if (!page) throw notFound(id(ctx));
    return paged(`${base}/${encodeURIComponent(id(ctx))}/runs`, ctx, page.items, page.next && RUNS_CURSOR.encode([page.next]));
  });

  router.add('PATCH', `${base}/{id}/run`, {
    summary: 'Report on the run in flight', tags, auth,
    description: 'With the token that created the schedule, after the 202, or before the gateway has recorded it (a service may report from inside its request handler). Every report renews the five-minute lease. retryIn takes any ISO 8601 duration and is clamped, never refused.',
    body: { type: 'object', required: ['run', 'state'], additionalProperties: false, properties: { run: { type: 'string' }, state: { type: 'string', enum: ['running', 'done', 'failed'] }, progress: { type: 'integer' }, detail: { type: 'string' }, retryIn: { type: 'string', description: 'ISO 8601, with failed: put the turn off (clamped to 1 minute … 1 day)' } } },
    responses: { 200: { description: 'recorded', schema: SCHEDULE_DOC.schedule }, 404: { description: 'no such schedule, or no such run in flight' } },
  }, async (ctx) => {
    writer(ctx);
    const owner = ownerOf(ctx);
    const report = parseReport(await ctx.json());
    const s = await gw.schedules.call('schedule.report', { id: id(ctx), owner, report });
    if (!s) throw notFound(id(ctx));
    return { body: s };
  });
}
