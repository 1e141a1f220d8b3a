import type { EntityManager } from '@mikro-orm/core';
import { Route } from '../../../store/entities.ts';
import type { RouteInput } from '../../../core/routes/route-input.ts';
import type { IdentityMode } from '../../../core/model.ts';
import { assertOrganisationExists, assertRolesExist } from '../../../core/references.ts';
import type { ConfigCalls, RouteRecord } from '../messages.ts';
import { write, type WriteDeps } from '../../write.ts';
import { contractConflict, type RouteAudit } from '../../../core/audit/rules.ts';
import { routeAuditView, storedAudit } from './route-audit.ts';
import { leavePerimeters, perimetersLeft } from './tokens.ts';
import type { ActorHandlers } from '../../../workers/actor-runtime.ts';

export function routeRecord(r: Route): RouteRecord {
  return {
    id: r.id, upstream: r.upstream, paths: r.paths, hosts: r.hosts, stripPrefix: r.stripPrefix,
    rule: r.rule ?? null, endpointRules: r.endpointRules, identity: r.identity as IdentityMode,
    timeoutMs: r.timeoutMs, organisation: r.organisation ?? null, openapi: r.openapi ?? null,
    audit: routeAuditView(r.openapi, r.audit), createdAt: r.createdAt, updatedAt: r.updatedAt,
  };
}

/**
 * Applies one route (API PUT or the declarative file): creates or replaces it whole. Its endpoint
 * audit rules are kept unless `audit` is given (the declarative file may carry them); a contract
 * that no longer holds an operation the rules name is refused (rules.ts `contractConflict`).
 */
export async function putRoute(em: EntityManager, input: RouteInput & { readonly audit?: RouteAudit }, now: number): Promise<{ created: boolean; route: Route }> {
  await assertRolesExist(em, input.rule?.roles ?? [], 'rule.roles');
  for (const [i, e] of input.endpointRules.entries()) await assertRolesExist(em, e.roles, `endpointRules[${i}].roles`);
  await assertOrganisationExists(em, input.organisation, 'organisation');
  const { id, audit, ...fields } = input;
  const existing = await em.findOne(Route, { id });
  const rules = audit !== undefined ? storedAudit(audit) : existing?.audit ?? null;
  const conflict = contractConflict(fields.openapi, rules, id);
  if (conflict) throw conflict;
  if (existing) {
    em.assign(existing, { ...fields, ...(audit !== undefined ? { audit: rules } : {}), updatedAt: now });
    return { created: false, route: existing };
  }
  const route = em.create(Route, { id, ...fields, audit: rules, createdAt: now, updatedAt: now });
  return { created: true, route };
}

type RouteCalls = Pick<ConfigCalls, 'route.put' | 'route.get' | 'route.list' | 'route.delete'>;

export function routeHandlers(deps: WriteDeps): ActorHandlers<RouteCalls> {
  return {
    'route.put': (input) => write(deps, 'route', async (em, audit) => {
      const old = await em.findOne(Route, { id: input.id });
      const before = old ? routeRecord(old) : null;
      const { created, route } = await putRoute(em, input, deps.now());
      await em.flush();
      const after = routeRecord(route);
      audit.note({ target: { kind: 'route', id: route.id, name: route.id }, organisation: after.organisation, before, after });
      return { created, route: after };
    }),
    'route.get': async ({ id }) => {
      const r = await deps.store.em().findOne(Route, { id });
      return r ? routeRecord(r) : null;
    },
    'route.list': async () => (await deps.store.em().find(Route, {}, { orderBy: { id: 'asc' } })).map(routeRecord),
    'route.delete': ({ id }) => write(deps, 'route', async (em, audit) => {
      const old = await em.findOne(Route, { id });
      if (!old) return false;
      const before = routeRecord(old);
      await em.nativeDelete(Route, { id });
      const tokens = await leavePerimeters(em, 'routes', id);
      audit.note({ target: { kind: 'route', id, name: id }, organisation: before.organisation, before, after: null, ...(tokens.length > 0 ? { detail: `deleted${perimetersLeft(tokens)}` } : {}) });
      return true;
    }),
  };
}
