/**
 * A schedule as a backend writes it (spec 2.1, CONTRACT.md "Schedules"): every field checked with
 * its own stable code and sentence, defaults applied. What depends on stored state (the route,
 * the token's perimeter, the organisation) is checked by the caller against the snapshot.
 */
import { canonicalForm, NOT_CANONICAL } from '../../http/canonical-path.ts';
import { GatewayError, invalidField, type ErrorCode } from '../../http/errors.ts';
import { cookieNames, GATEWAY_COOKIES, gatewayHeaderKind } from '../../http/gateway-headers.ts';
import { isFieldValue, isHeaderName, isRequestTarget } from '../../http/grammar.ts';
import { MAX_REFERENCES, referencedNames } from '../vault/references.ts';
import { nameProblem, objectBody, optionalString, stringList, type Fields } from '../validate.ts';
import { type Cadence, type CadenceResult, parseAt, parseCron, parseEvery, parseTimeout, parseTimezone } from './cadence/index.ts';

export const SCHEDULE_FIELDS = [
  'name', 'roles', 'role', 'method', 'routeId', 'path', 'every', 'cron', 'at', 'timezone', 'headers', 'body',
  'contentType', 'metadata', 'overlap', 'catchUp', 'timeout', 'organisation',
] as const;

export const LIMITS = { headers: 10, metadata: 20, name: 200, metadataValue: 1024, headerValue: 8192 } as const;
export const DEFAULT_CATCH_UP_S = 3600;
export const DEFAULT_TIMEOUT_MS = 30_000;
const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Each job header as the spec writes it, and what it carries. */
const JOB_HEADERS = new Map([
  ['gateway-job', 'Gateway-Job is refused: the gateway writes it on every call (the schedule id)'],
  ['gateway-job-run', 'Gateway-Job-Run is refused: the gateway writes it on every call (the run identifier)'],
  ['gateway-job-attempt', 'Gateway-Job-Attempt is refused: the gateway writes it on every call (the attempt number)'],
]);

/**
 * Why a header is the gateway's to write, never the schedule's (spec 5 rule 6, 1.1 rule 10,
 * CONTRACT.md "Schedules"). The names come from the lists the data plane strips from callers.
 */
function forbiddenReason(name: string, lower: string): string | undefined {
  switch (gatewayHeaderKind(lower)) {
    case undefined: return undefined;
    case 'authorization': return 'Authorization is refused: the call carries the scheduler\'s identity, posed inside the gateway and never sent as a token; a secret the service expects goes in another header with a vault reference such as ${name}';
    case 'host': return 'Host is refused: the route decides where the call goes';
    // Keyed by the dashed spelling: `Gateway_Job_Run` is the same variable to CGI-style servers.
    case 'job': return JOB_HEADERS.get(lower.replaceAll('_', '-'));
    case 'identity': return `${name} is refused: the gateway writes the identity the route forwards (X-Gateway-User and X-Gateway-Roles, Remote-User or a signed X-Gateway-Identity) from the schedule's roles, and strips any other copy; ask for roles instead`;
    case 'forwarding': return `${name} is refused: the gateway states the client address and the proxy chain itself; a schedule cannot claim them`;
    case 'override': return `${name} is refused: a service may take it in place of the call's own path or method, which the route's rules judge`;
    case 'hop-by-hop': return `${name} is refused: it describes one connection, and the gateway opens and frames each call itself`;
    case 'framing': return `${name} is refused: the gateway frames each call's body itself`;
  }
}

export interface ScheduleInput {
  readonly name: string | null;
  readonly roles: string[];
  readonly method: string;
  readonly routeId: string;
  readonly path: string;
  readonly cadence: Cadence;
  /** The cadence as written, for answers: exactly one is set. */
  readonly every: string | null;
  readonly cron: string | null;
  readonly at: string | null;
  readonly timezone: string;
  /** Values as written: a vault reference stays a reference. */
  readonly headers: Record<string, string>;
  readonly body: unknown;
  readonly contentType: string | null;
  readonly metadata: Record<string, string>;
  readonly overlap: 'skip';
  readonly catchUpS: number;
  readonly timeoutMs: number;
  readonly organisation: string | null;
}

function cadenceValue<T>(result: CadenceResult<T>, field: string): T {
  if (!result.ok) throw new GatewayError(result.code as ErrorCode, result.message, field);
  return result.value;
}

function roles(body: Fields): string[] {
  if (body.roles !== undefined && body.role !== undefined) {
    throw new GatewayError('schedule.roles-invalid', 'Send roles (a list) or role (one name), not both.', 'roles');
  }
  if (body.role !== undefined) {
    if (typeof body.role !== 'string' || nameProblem(body.role)) throw new GatewayError('schedule.roles-invalid', 'role must be the name of one role.', 'role');
    return [body.role];
  }
  if (body.roles === undefined || body.roles === null) return [];
  try {
    return stringList(body.roles, 'roles', { max: 100, item: nameProblem });
  } catch (err) {
    throw new GatewayError('schedule.roles-invalid', (err as GatewayError).detail, (err as GatewayError).field);
  }
}

function method(body: Fields): string {
  const raw = body.method ?? 'POST';
  const m = typeof raw === 'string' ? raw.toUpperCase() : '';
  if (m === 'GET' || m === 'HEAD') {
    throw new GatewayError('schedule.method-get', `method ${m} is refused: a scheduled call is an action, so it is sent with POST, PUT, PATCH or DELETE (a read has nobody to read its answer).`, 'method');
  }
  if (!(METHODS as readonly string[]).includes(m)) {
    throw new GatewayError('schedule.method-invalid', `method must be one of ${METHODS.join(', ')} (POST when left out).`, 'method');
  }
  return m;
}

function cadence(body: Fields): Pick<ScheduleInput, 'cadence' | 'every' | 'cron' | 'at' | 'timezone'> {
  const given = (['every', 'cron', 'at'] as const).filter((k) => body[k] !== undefined && body[k] !== null);
  if (given.length !== 1) {
    throw new GatewayError('schedule.cadence-count', given.length === 0
      ? 'A schedule needs exactly one of every (a period such as PT1H), cron (such as "0 9 * * MON-FRI") or at (one moment).'
      : `A schedule takes exactly one of every, cron or at; this one has ${given.join(' and ')}.`, given[1] ?? 'every');
  }
  const timezone = cadenceValue(parseTimezone(body.timezone), 'timezone');
  const none = { every: null, cron: null, at: null };
  // Each value is read (and its type checked) before it is kept as text.
  switch (given[0]!) {
    case 'every': {
      const everyMs = cadenceValue(parseEvery(body.every), 'every');
      return { ...none, every: (body.every as string).trim(), timezone, cadence: { kind: 'every', everyMs } };
    }
    case 'cron': {
      const spec = cadenceValue(parseCron(body.cron), 'cron');
      return { ...none, cron: (body.cron as string).trim(), timezone, cadence: { kind: 'cron', cron: spec, zone: timezone } };
    }
    case 'at': {
      const atMs = cadenceValue(parseAt(body.at), 'at');
      return { ...none, at: (body.at as string).trim(), timezone, cadence: { kind: 'at', atMs } };
    }
  }
}

/** A caller's object of names to text: an own-keys copy whose `__proto__` key stays a key. */
function textMap(v: unknown): Array<[string, unknown]> | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  return Object.entries(v);
}

/** Null prototype: a name such as `__proto__` is stored as a key, never read as the prototype. */
function record(entries: ReadonlyArray<readonly [string, string]>): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const [k, v] of entries) out[k] = v;
  return out;
}

function headers(body: Fields): Record<string, string> {
  const v = body.headers;
  if (v === undefined || v === null) return record([]);
  const entries = textMap(v);
  if (!entries) throw new GatewayError('schedule.header-invalid', 'headers must be an object of header names to text values.', 'headers');
  if (entries.length > LIMITS.headers) {
    throw new GatewayError('schedule.headers-too-many', `A schedule may set at most ${LIMITS.headers} headers; this one sets ${entries.length}.`, 'headers');
  }
  const out: Array<[string, string]> = [];
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    const field = `headers.${name}`;
    const forbidden = forbiddenReason(name, lower);
    if (forbidden !== undefined) throw new GatewayError('schedule.header-forbidden', `${forbidden}.`, field);
    if (!isHeaderName(name)) throw new GatewayError('schedule.header-invalid', `"${name}" is not a header name (letters, digits and !#$%&'*+.^_\`|~-).`, field);
    if (seen.has(lower)) throw new GatewayError('schedule.header-invalid', `The header ${name} is written twice (names are case-insensitive).`, field);
    // The rule the call applies when it writes the header: a value refused there would fail every run.
    if (typeof value !== 'string' || value.length > LIMITS.headerValue || !isFieldValue(value)) {
      throw new GatewayError('schedule.header-invalid', `The value of ${name} must be text on one line without control characters (Latin-1 at most), at most ${LIMITS.headerValue} characters.`, field);
    }
    const references = referencedNames(value).length;
    if (references > MAX_REFERENCES) {
      throw new GatewayError('schedule.header-invalid', `The value of ${name} names ${references} vault values; a header value names at most ${MAX_REFERENCES}.`, field);
    }
    if (lower === 'cookie') {
      const own = cookieNames(value).find((c) => GATEWAY_COOKIES.has(c));
      if (own !== undefined) throw new GatewayError('schedule.header-forbidden', `The cookie ${own} is refused: it is a session of the gateway itself, which never travels to a service.`, field);
    }
    seen.add(lower);
    out.push([name, value]);
  }
  return record(out);
}

function metadata(body: Fields): Record<string, string> {
  const v = body.metadata;
  if (v === undefined || v === null) return record([]);
  const entries = textMap(v);
  if (!entries) throw new GatewayError('schedule.metadata-invalid', 'metadata must be an object of keys to text values.', 'metadata');
  if (entries.length > LIMITS.metadata) {
    throw new GatewayError('schedule.metadata-too-many', `A schedule may carry at most ${LIMITS.metadata} metadata keys; this one has ${entries.length}.`, 'metadata');
  }
  for (const [key, value] of entries) {
    if (key === '' || key.length > 100) throw new GatewayError('schedule.metadata-invalid', 'A metadata key is 1 to 100 characters.', 'metadata');
    if (typeof value !== 'string' || value.length > LIMITS.metadataValue) {
      throw new GatewayError('schedule.metadata-invalid', `metadata.${key} must be text of at most ${LIMITS.metadataValue} characters.`, `metadata.${key}`);
    }
  }
  return record(entries as Array<[string, string]>);
}

function catchUp(body: Fields): number {
  const v = body.catchUp;
  if (v === undefined || v === null) return DEFAULT_CATCH_UP_S;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 366 * 86_400) {
    throw new GatewayError('schedule.catchup-invalid', 'catchUp is a whole number of seconds from 0 (whenever possible) to 31622400 (a year).', 'catchUp');
  }
  return v;
}

/**
 * The path as the data plane would route it (http/canonical-path.ts): dot segments refused,
 * repeated slashes merged. The query is the service's business and stays as written.
 */
function path(body: Fields): string {
  const v = body.path ?? '/';
  // The request target's rule as the call writes it, and no fragment: a path refused there would fail every run.
  if (typeof v !== 'string' || !v.startsWith('/') || v.length > 2000 || /[\s#]/.test(v) || !isRequestTarget(v)) {
    throw new GatewayError('schedule.path-invalid', 'path must start with "/" (it may carry a query), without spaces, control characters or "#", characters outside printable ASCII percent-encoded, at most 2000 characters.', 'path');
  }
  const q = v.indexOf('?');
  const canonical = canonicalForm(q < 0 ? v : v.slice(0, q));
  if (canonical === undefined) {
    throw new GatewayError('schedule.path-invalid', `path ${q < 0 ? v : v.slice(0, q)} holds ${NOT_CANONICAL}; write the path the service serves, as the data plane refuses such a path too.`, 'path');
  }
  return q < 0 ? canonical : canonical + v.slice(q);
}

export function parseSchedule(value: unknown): ScheduleInput {
  const body = objectBody(value, SCHEDULE_FIELDS, 'a schedule');
  const routeId = body.routeId;
  if (typeof routeId !== 'string' || nameProblem(routeId)) throw invalidField('routeId', 'routeId is required: the id of the route the call goes through.');
  const overlap = body.overlap ?? 'skip';
  if (overlap !== 'skip') throw new GatewayError('schedule.overlap-invalid', 'overlap accepts "skip" only: while a run is in flight the next turn does not go out.', 'overlap');
  const contentType = optionalString(body, 'contentType', { max: 200, pattern: /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;.*)?$/, hint: 'a media type such as application/json' }) ?? null;
  // It goes out as a header: what the call could not write would fail every run.
  if (contentType !== null && !isFieldValue(contentType)) throw invalidField('contentType', 'contentType holds a control character or a character past U+00FF, which a header cannot carry.');
  return {
    name: optionalString(body, 'name', { max: LIMITS.name }) ?? null,
    roles: roles(body),
    method: method(body),
    routeId,
    path: path(body),
    ...cadence(body),
    headers: headers(body),
    body: body.body === undefined ? null : body.body,
    contentType,
    metadata: metadata(body),
    overlap: 'skip',
    catchUpS: catchUp(body),
    timeoutMs: body.timeout === undefined || body.timeout === null ? DEFAULT_TIMEOUT_MS : cadenceValue(parseTimeout(body.timeout), 'timeout'),
    organisation: optionalString(body, 'organisation', { max: 100 }) ?? null,
  };
}
