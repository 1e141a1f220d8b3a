/**
 * The trail's API on the control plane (CONTRACT.md "Audit", spec 1.3 rules 10, 14-16):
 * `GET /api/audit` pages newest first within the caller's slice, `GET /api/audit/export` streams
 * the same selection as CSV (licensed), `GET/PUT /api/settings/audit` are root's.
 */
import type { Router } from '../../http/router.ts';
import { GatewayError, invalidField } from '../../http/errors.ts';
import { auditSlice, type AuditSlice } from '../../core/audit/visibility.ts';
import { AUDIT_LIMITS, nextCursor, parseAuditQuery, type AuditFilter } from '../../core/audit/query.ts';
import type { AuditChange, AuditEvent, AuditPart, TargetKind } from '../../core/audit/event.ts';
import type { AuditQuery, AuditRow } from '../../store/audit.ts';
import { AUDIT_RETENTIONS, isAuditRetention, isOperationRetention } from '../../store/audit-retention.ts';
import type { AuditSettings } from '../../store/audit-settings.ts';
import { requireLicensed } from '../edition.ts';
import { objectBody } from '../../core/validate.ts';
import type { GatewayContext } from '../context.ts';
import { principalLabel, type Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { seconds, WRITE_REFUSALS } from './resource-docs.ts';
import { recordChange } from '../shared/audit-note.ts';
import { csvHeader, csvRow } from '../../core/audit/csv.ts';

/**
 * A line of the trail. Members whose column is empty are left out (organisation, organisationFrom,
 * changes, detail, address, traceId, attributes), as are an actor's token and a target's id or name.
 */
const EVENT = {
  type: 'object',
  required: ['id', 'when', 'part', 'action', 'actor', 'target', 'node'],
  properties: {
    id: { type: 'string', description: 'sortable: newer lines have greater ids' },
    when: { type: 'integer', description: 'epoch seconds' },
    part: { type: 'string', enum: ['changes', 'security', 'operations'] },
    action: { type: 'string', description: 'route.update, signin.refused, operation.call, …' },
    actor: { type: ['object', 'null'], required: ['account'], properties: { account: { type: 'string' }, token: { type: 'string' } }, description: 'null when nobody is known (a refused name matching no account)' },
    target: { type: 'object', required: ['kind'], properties: { kind: { type: 'string' }, id: { type: 'string' }, name: { type: 'string' } } },
    organisation: { type: 'string' },
    organisationFrom: { type: 'string', description: 'the organisation a change took its object out of; the event belongs to it too' },
    changes: { type: 'array', items: { type: 'object', required: ['field', 'from', 'to'], properties: { field: { type: 'string' }, from: {}, to: {} } }, description: 'masked: secrets read ***' },
    detail: { type: 'string' },
    address: { type: 'string', description: 'the client address the gateway resolved' },
    traceId: { type: 'string' },
    attributes: {
      type: 'object', description: 'operation events: the fields of spec 2.6 (docs/audit.md "The line"), those known of the call',
      required: ['gateway.route', 'http.request.method', 'http.route', 'url.path', 'http.response.status_code', 'client.address'],
      properties: {
        'user.id': { type: 'string' }, 'user.name': { type: 'string' }, 'gateway.roles': { type: 'array', items: { type: 'string' } },
        'gateway.tenant.id': { type: 'string' }, 'gateway.tenant.name': { type: 'string' }, 'gateway.group': { type: 'string' },
        'gateway.route': { type: 'string' }, 'http.request.method': { type: 'string' }, 'http.route': { type: 'string', description: 'the operation\'s template' },
        'url.path': { type: 'string' }, 'http.response.status_code': { type: 'integer' }, 'client.address': { type: 'string' },
        'gateway.outcome': { type: 'string', enum: ['aborted'] },
        'http.request.body': { description: 'the JSON body, secret fields masked ***' },
        'audit.body.omitted': { type: 'string', description: 'why the body was not kept' },
      },
      patternProperties: { '^audit\\.field\\.': { description: 'a field the rule names (audit.field.<name>): its value, secrets masked' } },
    },
    node: { type: 'string' },
  },
} as const;

const FILTER_QUERY = {
  part: 'changes, security or operations; comma-joined',
  kind: 'an action (signin.refused) or its family (signin takes signin.*)',
  targetKind: 'target kinds, comma-joined', notTarget: 'target kinds left out, comma-joined',
  actor: 'the acting account\'s name', target: 'a target\'s id or name',
  organisation: 'an organisation\'s id: the events that belong to it or took something out of it',
  from: 'inclusive: epoch seconds or RFC 3339', to: 'exclusive: epoch seconds or RFC 3339',
  q: 'free text looked for in the detail and the address',
} as const;
const FILTER_DOC = 'Filters (all must hold): part (changes, security, operations; comma-joined), kind (an action or its family: signin takes signin.*), targetKind and notTarget (target kinds, comma-joined), actor (account name), target (a target\'s id or name), organisation (an organisation\'s id: the events that belong to it or that took something out of it, within what the caller may read), from (inclusive) and to (exclusive) as epoch seconds or RFC 3339, q (free text in the detail and the address). A filter that is not one of these is refused (filter.invalid), never ignored.';

/** The collector push as written (either switch may be left out) and, with both, as answered. */
const PUSH = { type: 'object', properties: { audit: { type: 'boolean' }, console: { type: 'boolean' } }, description: 'the collector push (licensed): the data plane\'s lines, and the console\'s too' } as const;

const SETTINGS = {
  type: 'object',
  required: ['retention', 'operationRetention', 'push', 'lastSweep', 'dropped', 'updatedAt', 'updatedBy'],
  properties: {
    retention: { type: 'string', enum: [...AUDIT_RETENTIONS], description: 'changes and security lines; default P1Y' },
    operationRetention: { type: 'string', description: 'audited operations: P7D to P1Y (days, weeks, months or P1Y); default P1M' },
    push: { ...PUSH, required: ['audit', 'console'] },
    lastSweep: {
      type: ['object', 'null'],
      required: ['at', 'removed'],
      properties: {
        at: { type: 'integer', description: 'epoch seconds' },
        removed: { type: 'object', description: 'lines removed, per part', required: ['changes', 'security', 'operations'], properties: { changes: { type: 'integer' }, security: { type: 'integer' }, operations: { type: 'integer' } } },
      },
    },
    dropped: { type: 'object', required: ['audit', 'console'], properties: { audit: { type: 'integer' }, console: { type: 'integer' } }, description: 'lines dropped since start by a full queue, per stream' },
    updatedAt: { type: ['integer', 'null'] },
    updatedBy: { type: ['string', 'null'] },
  },
} as const;

/** The lines one caller may read, or `capability` (never an empty page). */
function sliceOf(p: Principal): AuditSlice {
  const account = p.kind === 'anonymous' ? null : p.account;
  return auditSlice({ capabilities: account?.capabilities ?? [], organisations: account?.organisation ? [account.organisation] : [] });
}

export function storeQuery(f: AuditFilter, slice: AuditSlice): AuditQuery {
  return {
    ...(f.parts ? { parts: f.parts } : {}),
    ...(f.kind !== null ? { kind: f.kind } : {}),
    ...(f.actor !== null ? { actor: f.actor } : {}),
    ...(f.target !== null ? { target: f.target } : {}),
    ...(f.targetKinds ? { targetKinds: f.targetKinds } : {}),
    ...(f.notTargetKinds.length > 0 ? { notTargetKinds: f.notTargetKinds } : {}),
    ...(f.organisation !== null ? { organisation: f.organisation } : {}),
    ...(slice.all ? {} : { grants: slice.grants }),
    ...(f.from !== null ? { from: f.from * 1000 } : {}),
    ...(f.to !== null ? { to: f.to * 1000 } : {}),
    ...(f.q !== null ? { text: f.q } : {}),
    ...(f.before !== null ? { afterId: f.before } : {}),
    limit: f.limit,
  };
}

/** A stored row as the API answers it (CONTRACT.md "Audit"). */
export function eventOf(r: AuditRow): AuditEvent {
  return {
    id: r.id,
    when: seconds(r.at),
    part: r.part as AuditPart,
    action: r.action,
    actor: r.actorAccount === null ? null : { account: r.actorAccount, ...(r.actorToken !== null ? { token: r.actorToken } : {}) },
    target: { kind: r.targetKind as TargetKind, ...(r.targetId !== null ? { id: r.targetId } : {}), ...(r.targetName !== null ? { name: r.targetName } : {}) },
    ...(r.organisation !== null ? { organisation: r.organisation } : {}),
    ...(r.organisationFrom != null ? { organisationFrom: r.organisationFrom } : {}),
    // PostgreSQL's jsonb keeps keys in its own order: the answer puts field, from, to back.
    ...(Array.isArray(r.changes) && r.changes.length > 0 ? { changes: (r.changes as AuditChange[]).map((c) => ({ field: c.field, from: c.from, to: c.to })) } : {}),
    ...(r.detail !== null ? { detail: r.detail } : {}),
    ...(r.address !== null ? { address: r.address } : {}),
    ...(r.traceId !== null ? { traceId: r.traceId } : {}),
    ...(r.attributes !== null ? { attributes: r.attributes } : {}),
    node: r.node,
  };
}

/** Rows an export holds at most: a bigger selection is narrowed with the filters. */
export const EXPORT_MAX_ROWS = 100_000;
/** The export goes out in pieces of about this many characters. */
const EXPORT_CHUNK_CHARS = 64 * 1024;

export function addAuditApi(router: Router<Principal>, gw: GatewayContext): void {
  const tags = ['audit'];

  router.add('GET', '/api/audit', {
    summary: 'The audit trail, newest first, within the caller\'s perimeter', tags, auth: 'session',
    description: `${FILTER_DOC} Paged with limit (1-${AUDIT_LIMITS.max}, default ${AUDIT_LIMITS.fallback}) and cursor (the previous answer's next). Root reads everything; infra-admin the changes to routes, identity providers, certificates, settings and issue reports; app-admin the changes to accounts, roles, themes, languages, schedules, settings and issue reports, the security of application accounts and audited operations; an organisation's administrator the lines of their organisation, and those that moved something out of it. Console sign-ins and exports are root's alone.`,
    query: { ...FILTER_QUERY, limit: `1 to ${AUDIT_LIMITS.max} (default ${AUDIT_LIMITS.fallback})`, cursor: 'the previous page\'s next' },
    schemas: { limit: { type: 'integer', minimum: 1, maximum: AUDIT_LIMITS.max, default: AUDIT_LIMITS.fallback } },
    responses: {
      200: { description: 'a page', schema: { type: 'object', required: ['events', 'next'], properties: { events: { type: 'array', items: EVENT }, next: { type: ['string', 'null'], description: 'cursor of the next page; null on the last' } } } },
      400: { description: 'a filter or the cursor is refused (filter.invalid, cursor.invalid, field.invalid)' },
      403: { description: 'no audit capability (capability): never an empty page' },
    },
  }, async (ctx) => {
    const slice = sliceOf(ctx.principal);
    const filter = parseAuditQuery(ctx.query);
    const rows = await gw.audit.call('audit.query', storeQuery(filter, slice));
    const page = rows.slice(0, filter.limit);
    return { body: { events: page.map(eventOf), next: rows.length > filter.limit ? nextCursor(page.at(-1)!.id) : null } };
  });

  router.add('GET', '/api/audit/export', {
    summary: 'The filtered trail as CSV (licensed edition)', tags, auth: 'session',
    description: `The same filters and perimeter as GET /api/audit, every page (at most ${EXPORT_MAX_ROWS} rows), newest first. Columns: when (RFC 3339), part, action, actor, token, target_kind, target_id, target_name, organisation, address, detail, changes (JSON), trace_id, attributes (JSON: an operation call\'s fields). Written as it is read, without a Content-Length. The export writes its own line (audit.export), read by root.`,
    query: FILTER_QUERY,
    responses: { 200: { description: 'the events as CSV', type: 'text/csv' }, 400: { description: 'a filter is refused' }, 403: { description: 'no audit capability, or the community edition (licensed-edition)' } },
  }, async (ctx) => {
    const slice = sliceOf(ctx.principal);
    requireLicensed(gw.settings, 'The audit export');
    const filter = parseAuditQuery(ctx.query);
    if (filter.before !== null || ctx.query.has('limit')) throw invalidField(ctx.query.has('limit') ? 'limit' : 'cursor', 'The export takes every page: leave out limit and cursor.');
    const query = (before: string | null): Promise<AuditRow[]> => gw.audit.call('audit.query', storeQuery({ ...filter, limit: AUDIT_LIMITS.max, before }, slice));
    // The first page is read before the head goes out: a store that cannot answer is a refusal, not a cut file.
    const first = await query(null);
    const filters = ctx.query.size > 0 ? `; filters ${ctx.query.toString()}` : '';
    // Written as it is read, a chunk at a time: 100,000 rows of operation calls with their bodies
    // would not fit in one string (V8 caps a string near 2^29 characters).
    async function* csv(): AsyncGenerator<string> {
      let count = 0;
      let finished = false;
      try {
        let chunk = csvHeader();
        let rows = first;
        for (;;) {
          const page = rows.slice(0, AUDIT_LIMITS.max);
          for (const r of page) {
            if (count >= EXPORT_MAX_ROWS) break;
            chunk += csvRow(eventOf(r));
            count += 1;
            if (chunk.length >= EXPORT_CHUNK_CHARS) {
              yield chunk;
              chunk = '';
            }
          }
          if (rows.length <= AUDIT_LIMITS.max || count >= EXPORT_MAX_ROWS) break;
          rows = await query(page.at(-1)!.id);
        }
        if (chunk !== '') yield chunk;
        finished = true;
      } finally {
        recordChange(gw, ctx, {
          action: 'audit.export', target: { kind: 'audit', name: 'export' },
          detail: `${count} ${count === 1 ? 'row' : 'rows'}${finished ? '' : ', cut off before the end'}${filters}`.slice(0, 1000),
        });
      }
    }
    return {
      headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="audit.csv"' },
      stream: csv(),
    };
  });

  const settingsBody = async (s: AuditSettings) => ({
    retention: s.retention,
    operationRetention: s.operationRetention,
    push: s.push,
    lastSweep: s.lastSweep === null ? null : { at: seconds(s.lastSweep.at), removed: s.lastSweep.deleted },
    dropped: (await gw.audit.pushState()).dropped,
    updatedAt: s.updatedAt === null ? null : seconds(s.updatedAt),
    updatedBy: s.updatedBy,
  });

  router.add('GET', '/api/settings/audit', {
    summary: 'Retention of the trail, the collector push, the last sweep (root)', tags: ['settings', ...tags], auth: 'session',
    responses: { 200: { description: 'the settings', schema: SETTINGS }, 403: { description: 'not root' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'root');
    return { body: await settingsBody(await gw.audit.call('settings.get', null)) };
  });

  router.add('PUT', '/api/settings/audit', {
    summary: 'Set the retention and the collector push (root)', tags: ['settings', ...tags], auth: 'session',
    description: 'Fields left out keep their value. A shortened retention removes the older lines at the next sweep (hourly). push is the licensed edition\'s: on the community edition switching it on is refused (licensed-edition).',
    body: { type: 'object', minProperties: 1, additionalProperties: false, properties: { retention: SETTINGS.properties.retention, operationRetention: SETTINGS.properties.operationRetention, push: PUSH } },
    responses: { 200: { description: 'the settings as stored', schema: SETTINGS }, ...WRITE_REFUSALS, 409: { description: 'audit.no-collector: push switched on with no collector configured (GATEWAY_OTLP_ENDPOINT)' } },
  }, async (ctx) => {
    requireCapability(ctx.principal, 'root');
    const f = objectBody(await ctx.json(), ['retention', 'operationRetention', 'push'], 'the audit settings');
    // Nothing to change stores nothing (not even who asked, and when).
    if (Object.keys(f).length === 0) throw invalidField('retention', 'Give retention, operationRetention or push, or several of them.');
    const current = await gw.audit.call('settings.get', null);
    if (f.retention !== undefined && !isAuditRetention(f.retention)) throw invalidField('retention', `retention is one of ${AUDIT_RETENTIONS.join(', ')}.`);
    if (f.operationRetention !== undefined && !isOperationRetention(f.operationRetention)) {
      throw invalidField('operationRetention', 'operationRetention is from seven days to a year: P7D to P365D, P1W to P52W, P1M to P12M, or P1Y.');
    }
    let push = current.push;
    if (f.push !== undefined) {
      const p = objectBody(f.push, ['audit', 'console'], 'push', 'push');
      for (const k of ['audit', 'console'] as const) {
        if (p[k] !== undefined && typeof p[k] !== 'boolean') throw invalidField(`push.${k}`, `push.${k} is true or false.`);
      }
      push = { audit: (p.audit as boolean | undefined) ?? push.audit, console: (p.console as boolean | undefined) ?? push.console };
      if (push.audit || push.console) requireLicensed(gw.settings, 'The collector push of the audit trail');
      if ((push.audit || push.console) && !gw.settings.otlpEndpoint) {
        throw new GatewayError('audit.no-collector', 'No collector is configured: set GATEWAY_OTLP_ENDPOINT before switching the push on.', 'push');
      }
    }
    const choice = {
      retention: (f.retention as AuditSettings['retention'] | undefined) ?? current.retention,
      operationRetention: (f.operationRetention as string | undefined) ?? current.operationRetention,
      push,
    };
    const stored = await gw.audit.call('settings.put', { settings: choice, by: principalLabel(ctx.principal) });
    const pick = (s: AuditSettings) => ({ retention: s.retention, operationRetention: s.operationRetention, push: s.push });
    recordChange(gw, ctx, { action: 'settings.update', target: { kind: 'settings', id: 'audit', name: 'audit' }, before: pick(current), after: pick(stored) });
    return { body: await settingsBody(stored) };
  });
}
