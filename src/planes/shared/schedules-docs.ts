/** OpenAPI schemas of the scheduling API (spec 2.1-2.4, CONTRACT.md "Schedules"). */
import type { Schema } from '../../http/router.ts';

const STRINGS = { type: 'object', additionalProperties: { type: 'string' } } as const;

const WRITABLE = {
  name: { type: ['string', 'null'], maxLength: 200, description: 'null when none was given' },
  roles: { type: 'array', items: { type: 'string' }, description: 'roles the call carries (hierarchy expanded); within the token\'s perimeter' },
  role: { type: 'string', description: 'single-role form of roles' },
  method: { type: 'string', enum: ['POST', 'PUT', 'PATCH', 'DELETE'], default: 'POST', description: 'GET is refused: a scheduled call is an action' },
  routeId: { type: 'string', description: 'the route the call goes through (never a URL)' },
  path: { type: 'string', default: '/', description: 'path on the route, served by it; may carry a query. Canonical as the data plane routes it: a "." or ".." segment (also %2e, or followed by ";"), a backslash (also %5C) or %00 is refused (schedule.path-invalid); repeated slashes are merged and escaped unreserved characters decoded (%61 is a), and that path is stored. A space, a control character, "#" or a character outside printable ASCII (percent-encode it) is refused (schedule.path-invalid)' },
  every: { type: 'string', description: 'ISO 8601 duration, at least PT1M, counted from the end of the last run' },
  cron: { type: 'string', description: 'five fields (lists, ranges, steps, MON-SUN, JAN-DEC) or @hourly … @yearly, on the timezone\'s wall clock' },
  at: { type: 'string', format: 'date-time', description: 'one RFC 3339 moment with an offset' },
  timezone: { type: 'string', default: 'UTC', description: 'IANA zone for cron; unknown zones are refused' },
  headers: { ...STRINGS, maxProperties: 10, description: 'values may be vault references ${name} or $name (at most 16 in a value), resolved at call time; a call whose headers pass 128 KiB once resolved is refused unsent (431 schedule.headers-too-large on the run); a value with a control character or a character past U+00FF is refused (schedule.header-invalid). Headers the gateway writes itself are refused (schedule.header-forbidden, field headers.<name>): Authorization, Host, Gateway-Job, Gateway-Job-Run, Gateway-Job-Attempt, X-Gateway-User, X-Gateway-Roles, X-Gateway-Organisation, X-Gateway-Identity, Remote-User, Forwarded, X-Real-IP, X-Forwarded, every X-Forwarded-*, True-Client-IP, X-Client-IP, X-Cluster-Client-IP, X-Original-URL, X-Rewrite-URL, X-HTTP-Method-Override, X-Method-Override, X-HTTP-Method, hop-by-hop headers (Connection, Keep-Alive, Proxy-Connection, Transfer-Encoding, TE, Trailer, Upgrade, Proxy-Authorization, Proxy-Authenticate) and framing headers (Content-Length, Expect); a Cookie header holding the gateway\'s own session cookies (mk_session, mk_app) is refused too' },
  body: { description: 'any JSON: object or array sent as application/json, a string as text/plain; charset=utf-8' },
  contentType: { type: ['string', 'null'], description: 'explicit media type: always wins; null when none was given' },
  metadata: { ...STRINGS, maxProperties: 20, description: 'stored and matched without interpretation' },
  overlap: { type: 'string', enum: ['skip'], default: 'skip' },
  catchUp: { type: 'integer', minimum: 0, default: 3600, description: 'seconds a turn may go out late; 0: whenever possible' },
  timeout: { type: 'string', default: 'PT30S', description: 'ISO 8601, at most PT2M' },
  organisation: { type: ['string', 'null'], description: 'the organisation the calls act for (vault scope, membership carried, tenant filter): one of the token\'s organisations (403 perimeter)' },
} as const;

function withoutRole<T extends { role: unknown }>(fields: T): Omit<T, 'role'> {
  const { role: _role, ...rest } = fields;
  return rest;
}

/** A run record. status, detail, cause, ofRun and attempts are left out when the record has none. */
export const RUN_DOC: Schema = {
  type: 'object',
  required: ['id', 'runId', 'attempt', 'node', 'scheduledFor', 'startedAt', 'endedAt', 'state'],
  properties: {
    id: { type: 'string', description: 'history id, run-<hex>' }, runId: { type: 'string' }, attempt: { type: 'integer' },
    node: { type: ['string', 'null'] }, scheduledFor: { type: ['integer', 'null'] }, startedAt: { type: ['integer', 'null'] },
    endedAt: { type: 'integer' }, state: { type: 'string', enum: ['done', 'failed', 'lost', 'dropped'] },
    status: { type: 'integer', description: 'the answer\'s status; absent when there was none (a dropped turn, an attempt lost with its gateway)' }, detail: { type: 'string' }, cause: { type: 'string' }, ofRun: { type: 'string' },
    attempts: {
      type: 'array', description: 'every attempt of a retried turn, oldest first',
      items: { type: 'object', required: ['attempt', 'runId', 'status', 'detail', 'endedAt'], properties: { attempt: { type: 'integer' }, runId: { type: 'string' }, status: { type: ['integer', 'null'] }, detail: { type: 'string' }, startedAt: { type: 'integer', description: 'epoch s; absent on attempts recorded before it was kept' }, endedAt: { type: 'integer', description: 'epoch s' } } },
    },
  },
};

export const SCHEDULE_DOC = {
  body: { type: 'object', required: ['routeId'], additionalProperties: false, properties: WRITABLE } as Schema,
  schedule: {
    type: 'object',
    // every, cron and at: the one the schedule was written with; body: when it has one.
    required: [
      'id', 'name', 'roles', 'method', 'routeId', 'path', 'timezone', 'headers', 'contentType', 'metadata', 'overlap', 'catchUp', 'timeout', 'organisation',
      'paused', 'finished', 'stopped', 'nextRunAt', 'inFlight', 'lastRun', 'deferrals', 'token', 'runRequested', 'createdAt', 'updatedAt',
    ],
    properties: {
      // `role` is a way to write `roles`, never answered.
      id: { type: 'string' }, ...withoutRole(WRITABLE),
      paused: { type: 'boolean' }, finished: { type: 'boolean', description: 'an at schedule after its turn' },
      stopped: { type: ['string', 'null'], enum: ['token-revoked', null], description: 'why the schedule stopped for good: token-revoked once the token that wrote it is revoked (it is kept; root can read and delete it)' },
      nextRunAt: { type: ['integer', 'null'], description: 'epoch seconds' },
      inFlight: { type: ['object', 'null'], required: ['runId', 'attempt', 'phase', 'startedAt', 'node'], properties: { runId: { type: 'string' }, attempt: { type: 'integer' }, phase: { type: 'string', enum: ['calling', 'waiting', 'accepted'] }, startedAt: { type: 'integer' }, node: { type: 'string', description: 'the gateway node making the call' } } },
      lastRun: { oneOf: [RUN_DOC, { type: 'null' }] },
      deferrals: { type: 'integer' }, token: { type: ['string', 'null'], description: 'name of the token that wrote it' },
      runRequested: {
        type: ['object', 'null'], description: 'a run now or replay waiting for the engine',
        required: ['at', 'replayOf'],
        properties: { at: { type: 'integer', description: 'epoch seconds it was asked' }, replayOf: { type: ['string', 'null'], description: 'the run record replayed; null for a run now' } },
      },
      createdAt: { type: 'integer' }, updatedAt: { type: 'integer' },
    },
  } as Schema,
};
