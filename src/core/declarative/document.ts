/**
 * The declarative file named by GATEWAY_CONFIG (JSON or YAML): roles, organisations and routes,
 * applied at start like an import. Every entry is checked with the same parsers as the API; a
 * refusal names the file's path to the field (`routes.orders.upstream`).
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { GatewayError } from '../../http/errors.ts';
import { parseRoute, type RouteInput } from '../routes/route-input.ts';
import { parseRole, type RoleInput } from '../roles/role-input.ts';
import { parseOrganisation, type OrganisationInput } from '../organisations/organisation-input.ts';
import { objectBody, pathId } from '../validate.ts';
import { parseRouteAudit, type RouteAudit } from '../audit/rules.ts';
import { repeatedKey } from '../../http/json-keys.ts';
import { jsonBodyProblem } from '../../http/json-body.ts';

/** A route of the file: its `audit` (the rules the route editor exports) replaces the stored rules when given. */
export type DeclarativeRoute = RouteInput & { readonly audit?: RouteAudit };

export interface Declarative {
  readonly roles: RoleInput[];
  readonly organisations: OrganisationInput[];
  readonly routes: DeclarativeRoute[];
}

/**
 * A route with its endpoint audit rules, checked against its own contract. The rules are kept on
 * every edition (a configuration brought from the licensed edition keeps them, not applied).
 */
function parseDeclarativeRoute(id: string, value: unknown): DeclarativeRoute {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, 'audit')) return parseRoute(id, value);
  const { audit, ...rest } = value as Record<string, unknown>;
  const route = parseRoute(id, rest);
  if (audit === undefined || audit === null) return route;
  try {
    return { ...route, audit: parseRouteAudit(audit, route.openapi) };
  } catch (err) {
    if (err instanceof GatewayError) throw new GatewayError(err.code, err.detail, `audit.${err.field ?? 'operations'}`);
    throw err;
  }
}

export class DeclarativeError extends Error {
  override readonly name = 'DeclarativeError';
}

function section<T>(doc: Record<string, unknown>, key: string, parse: (id: string, value: unknown) => T): T[] {
  const value = doc[key];
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) throw new DeclarativeError(`${key} must be a map from id to definition`);
  return Object.entries(value as Record<string, unknown>).map(([id, def]) => {
    try {
      return parse(pathId(id, key.replace(/s$/, '')), def ?? {});
    } catch (err) {
      if (err instanceof GatewayError) {
        const where = err.field && err.field !== 'body' && err.field !== 'id' ? `${key}.${id}.${err.field}` : `${key}.${id}`;
        throw new DeclarativeError(`${where}: ${err.detail}`);
      }
      throw err;
    }
  });
}

/** Reads and checks the file; throws DeclarativeError with a sentence naming the place at fault. */
export function readDeclarative(file: string): Declarative {
  let doc: unknown;
  const text = readFileSync(file, 'utf8');
  const json = /\.json$/i.test(file);
  try {
    doc = json ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new DeclarativeError(`it cannot be read: ${(err as Error).message}`);
  }
  const repeated = json ? repeatedKey(text) : null;
  if (repeated) {
    const where = repeated.path === '' ? 'the top level' : repeated.path;
    throw new DeclarativeError(`${where}: "${repeated.key}" is written twice (again on line ${repeated.line}); give each member once.`);
  }
  if (doc === null || doc === undefined) return { roles: [], organisations: [], routes: [] };
  // What the API refuses in any body (a NUL, half a surrogate pair, nesting past its depth) is
  // refused here too: the file's entries are stored as the API's are.
  const problem = jsonBodyProblem(doc);
  if (problem) throw new DeclarativeError(`${problem.field === 'body' ? 'the file' : problem.field}: ${problem.detail}`);
  let top: Record<string, unknown>;
  try {
    top = objectBody(doc, ['roles', 'organisations', 'routes'], 'the declarative file') as Record<string, unknown>;
  } catch (err) {
    throw new DeclarativeError((err as GatewayError).detail);
  }
  return {
    roles: section(top, 'roles', parseRole),
    organisations: section(top, 'organisations', parseOrganisation),
    routes: section(top, 'routes', parseDeclarativeRoute),
  };
}

/** Roles in an order where each one's implied roles come first; a cycle is left for the check. */
export function rolesInOrder(roles: readonly RoleInput[]): RoleInput[] {
  const byName = new Map(roles.map((r) => [r.name, r]));
  const out: RoleInput[] = [];
  const seen = new Set<string>();
  const visit = (r: RoleInput, path: Set<string>) => {
    if (seen.has(r.name) || path.has(r.name)) return;
    path.add(r.name);
    for (const dep of r.implies) {
      const d = byName.get(dep);
      if (d) visit(d, path);
    }
    path.delete(r.name);
    seen.add(r.name);
    out.push(r);
  };
  for (const r of roles) visit(r, new Set());
  return out;
}
