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

/**
 * What changed in the operations' `secretFields`, in words, or undefined. Rule 6 masks that field
 * (its name holds "secret"), so its diff reads `*** → ***`; but its values are names of fields,
 * not secrets, and a name taken out of it means bodies are kept unmasked from then on: the
 * detail says which, where rule 6 does not reach.
 */
export function secretFieldsDetail(before: RouteAudit | null, after: RouteAudit | null): string | undefined {
  const parts: string[] = [];
  for (const [operation, rule] of Object.entries(after?.operations ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const was = new Set(before?.operations[operation]?.secretFields ?? []);
    const now = new Set(rule.secretFields ?? []);
    const added = [...now].filter((n) => !was.has(n));
    const removed = [...was].filter((n) => !now.has(n));
    if (added.length === 0 && removed.length === 0) continue;
    const said = [
      ...(added.length > 0 ? [`masks ${added.join(', ')}`] : []),
      ...(removed.length > 0 ? [`no longer masks ${removed.join(', ')}`] : []),
    ];
    parts.push(`${operation} ${said.join(' and ')}`);
  }
  return parts.length > 0 ? `secretFields: ${parts.join('; ')}` : undefined;
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
      const detail = secretFieldsDetail(before.audit, route.audit);
      audit.note({
        action: 'route.audit', target: { kind: 'route', id, name: id }, organisation: route.organisation ?? null,
        before, after: { audit: route.audit }, ...(detail !== undefined ? { detail } : {}),
      });
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
