/**
 * A route as written through the API or the declarative file: every field checked, defaults
 * applied. Whether the roles and the organisation exist is checked by the config actor, against
 * the database, in the same transaction as the write.
 */
import { GatewayError, invalidField } from '../../http/errors.ts';
import { canonicalForm, NOT_CANONICAL } from '../../http/canonical-path.ts';
import { IDENTITY_MODES, type IdentityMode } from '../model.ts';
import { readIsoDuration } from '../schedules/cadence/duration.ts';
import { templateProblem } from '../../pipeline/endpoint-rules.ts';
import { nameProblem, objectBody, optionalBoolean, optionalString, stringList, type Fields } from '../validate.ts';

export interface RouteInput {
  readonly id: string;
  readonly upstream: string;
  readonly paths: string[];
  readonly hosts: string[];
  readonly stripPrefix: boolean;
  readonly rule: { roles: string[] } | null;
  readonly endpointRules: Array<{ method: string; path: string; roles: string[] }>;
  readonly identity: IdentityMode;
  readonly timeoutMs: number;
  readonly openapi: unknown;
  readonly organisation: string | null;
}

export const ROUTE_FIELDS = ['upstream', 'paths', 'hosts', 'stripPrefix', 'rule', 'endpointRules', 'identity', 'timeout', 'openapi', 'organisation'] as const;
export const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_TIMEOUT_MS = 3_600_000;
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', '*']);
const HOST = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

function upstream(body: Fields): string {
  const raw = body.upstream;
  if (typeof raw !== 'string' || raw.trim() === '') {
    throw new GatewayError('route.upstream-invalid', 'upstream is required: an http:// or https:// URL such as http://orders:8080.', 'upstream');
  }
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    // Not quoted: a URL that does not parse may still carry a password (`http://svc:pw@host:80a`).
    throw new GatewayError('route.upstream-invalid', 'upstream is not a URL; write http://host:port or https://host.', 'upstream');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new GatewayError('route.upstream-invalid', `upstream must use http:// or https://, not ${url.protocol}//.`, 'upstream');
  }
  if (url.username || url.password) throw new GatewayError('route.upstream-invalid', 'upstream must not carry a user name or password; put credentials in the vault.', 'upstream');
  if (url.search || url.hash) throw new GatewayError('route.upstream-invalid', 'upstream must not carry a query or a fragment.', 'upstream');
  return `${url.origin}${url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '')}`;
}

/**
 * A prefix is matched against canonical request paths (http/canonical-path.ts): one that is not
 * canonical itself could never match, and the rule an operator believes it guards would be dead.
 */
function pathProblem(p: string): string | undefined {
  if (!p.startsWith('/')) return `"${p}" must start with "/"`;
  if (p.length > 500) return 'is longer than 500 characters';
  if (/[\s?#\u0000-\u001f\u007f]/.test(p)) return `"${p}" must not hold spaces, control characters, "?" or "#"`;
  const canonical = canonicalForm(p);
  if (canonical === undefined) return `"${p}" holds ${NOT_CANONICAL}, which no request path the gateway routes can`;
  if (canonical !== p) return `"${p}" is written otherwise than the request paths it should match: write "${canonical}"`;
  return undefined;
}

function paths(body: Fields): string[] {
  const value = body.paths;
  if (!Array.isArray(value) || value.length === 0) {
    throw new GatewayError('route.path-invalid', 'paths is required: a list of path prefixes such as ["/orders"].', 'paths');
  }
  value.forEach((p, i) => {
    const problem = typeof p === 'string' ? pathProblem(p) : 'must be a string';
    if (problem) throw new GatewayError('route.path-invalid', `paths[${i}] ${problem}.`, `paths[${i}]`);
  });
  return stringList(value, 'paths', { max: 50, min: 1 });
}

function roleList(value: unknown, field: string): string[] {
  return stringList(value, field, { max: 100, min: 1, item: nameProblem });
}

function rule(body: Fields): { roles: string[] } | null {
  const v = body.rule;
  if (v === undefined || v === null) return null;
  const r = objectBody(v, ['roles'], 'rule', 'rule');
  return { roles: roleList(r.roles, 'rule.roles') };
}

function endpointRules(body: Fields): RouteInput['endpointRules'] {
  const v = body.endpointRules;
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalidField('endpointRules', 'endpointRules must be a list of {method, path, roles}.');
  if (v.length > 500) throw invalidField('endpointRules', 'endpointRules may hold at most 500 rules.');
  return v.map((item, i) => {
    const f = `endpointRules[${i}]`;
    const r = objectBody(item, ['method', 'path', 'roles'], f, f);
    const method = typeof r.method === 'string' ? r.method.toUpperCase() : '';
    if (!METHODS.has(method)) throw invalidField(`${f}.method`, `${f}.method must be one of ${[...METHODS].join(', ')}.`);
    if (typeof r.path !== 'string') throw invalidField(`${f}.path`, `${f}.path must be a path template such as /orders/{id}.`);
    const problem = templateProblem(r.path);
    if (problem) throw invalidField(`${f}.path`, `${f}.path: ${problem}`);
    return { method, path: r.path, roles: roleList(r.roles, `${f}.roles`) };
  });
}

function timeout(body: Fields): number {
  const v = body.timeout;
  if (v === undefined || v === null) return DEFAULT_TIMEOUT_MS;
  const d = readIsoDuration(v);
  if (!d.ok) throw invalidField('timeout', `timeout: ${d.reason}.`);
  if (d.ms < 1000 || d.ms > MAX_TIMEOUT_MS) throw invalidField('timeout', 'timeout must be from PT1S to PT1H.');
  return d.ms;
}

export function parseRoute(id: string, value: unknown): RouteInput {
  const body = objectBody(value, ROUTE_FIELDS, 'a route');
  const identity = body.identity ?? 'headers';
  if (typeof identity !== 'string' || !(IDENTITY_MODES as readonly string[]).includes(identity)) {
    const given = typeof identity === 'string' ? `identity "${identity}" is not a way to forward identity` : 'identity must be text naming a way to forward identity';
    throw new GatewayError('route.identity-unknown', `${given}; use ${IDENTITY_MODES.join(', ')}.`, 'identity');
  }
  const openapi = body.openapi ?? null;
  if (openapi !== null && (typeof openapi !== 'object' || Array.isArray(openapi))) {
    throw invalidField('openapi', 'openapi must be the OpenAPI document as a JSON object.');
  }
  return {
    id,
    upstream: upstream(body),
    paths: paths(body),
    hosts: body.hosts === undefined || body.hosts === null
      ? []
      : stringList(body.hosts, 'hosts', { max: 50, item: (h) => (HOST.test(h) ? undefined : 'must be a lower-case host name without port, such as api.example.com') }),
    stripPrefix: optionalBoolean(body, 'stripPrefix', false),
    rule: rule(body),
    endpointRules: endpointRules(body),
    identity: identity as IdentityMode,
    timeoutMs: timeout(body),
    openapi,
    organisation: optionalString(body, 'organisation', { max: 100 }) ?? null,
  };
}

/** ISO 8601 text of a timeout for answers: whole seconds, minutes or hours. */
export function formatTimeout(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s % 3600 === 0) return `PT${s / 3600}H`;
  if (s % 60 === 0) return `PT${s / 60}M`;
  return `PT${s}S`;
}
