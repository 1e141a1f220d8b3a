/**
 * A route's endpoint audit rules (spec 1.3 rules 12 and 13), stored with the route. They are
 * checked against the route's contract inside the write's transaction, so a contract changed by
 * another write in between cannot slip past the check; every node reloads through the change row.
 */
import { Route } from '../../../store/entities.ts';
import { contractExcerpt, parseRouteAudit, sortedAudit, type RouteAudit } from '../../../core/audit/rules.ts';
import type { RouteAuditView } from '../../../core/model.ts';
import type { ActorHandlers } from '../../../workers/actor-runtime.ts';
import type { ConfigCalls } from '../messages.ts';
import { write, type WriteDeps } from '../../write.ts';

/** Rules as stored: null when they name no operation (removal). */
export function storedAudit(rules: RouteAudit | null | undefined): RouteAudit | null {
  return rules && Object.keys(rules.operations).length > 0 ? rules : null;
}

/** What the snapshot carries of a route's rules: the rules and the contract's part they name. */
export function routeAuditView(openapi: unknown, rules: RouteAudit | null | undefined): RouteAuditView | null {
  const stored = storedAudit(rules);
  return stored ? { rules: stored, contract: contractExcerpt(openapi, stored) } : null;
}

type RouteAuditCalls = Pick<ConfigCalls, 'route.audit.put' | 'route.audit.get'>;

export function routeAuditHandlers(deps: WriteDeps): ActorHandlers<RouteAuditCalls> {
  return {
    'route.audit.put': ({ id, body }) => write(deps, 'route', async (em, audit) => {
      const route = await em.findOne(Route, { id });
      if (!route) return false;
      const rules = parseRouteAudit(body, route.openapi ?? null);
      const before = { audit: storedAudit(route.audit) };
      route.audit = storedAudit(rules);
      audit.note({ action: 'route.audit', target: { kind: 'route', id, name: id }, organisation: route.organisation ?? null, before, after: { audit: route.audit } });
      route.updatedAt = deps.now();
      await em.flush();
      return sortedAudit(rules);
    }),
    'route.audit.get': async ({ id }) => {
      const route = await deps.store.em().findOne(Route, { id });
      if (!route) return null;
      return sortedAudit(storedAudit(route.audit) ?? { operations: {} });
    },
  };
}
