import type { Declarative } from '../../../core/declarative/document.ts';
import { rolesInOrder } from '../../../core/declarative/document.ts';
import { GatewayError } from '../../../http/errors.ts';
import { findCycle } from '../../../pipeline/roles.ts';
import type { ConfigCalls } from '../messages.ts';
import { putRole } from './roles.ts';
import { putOrganisation } from './organisations.ts';
import { putRoute, routeRecord } from './routes.ts';
import type { EntityManager } from '@mikro-orm/core';
import { Organisation, Role, Route } from '../../../store/entities.ts';
import { canonical } from '../../../core/audit/diff.ts';
import { summarise } from '../../../core/audit/summary.ts';
import { write, type WriteDeps } from '../../write.ts';
import type { ActorHandlers } from '../../../workers/actor-runtime.ts';

/** What the file can set, by `<kind> <name>`, each as its canonical encoding. */
async function declared(em: EntityManager): Promise<Map<string, string>> {
  // One after another: a transaction is one connection, and it runs one query at a time.
  const roles = await em.find(Role, {});
  const organisations = await em.find(Organisation, {});
  const routes = await em.find(Route, {});
  return new Map([
    ...roles.map((r): [string, string] => [`role ${r.name}`, canonical({ implies: r.implies })]),
    ...organisations.map((o): [string, string] => [`organisation ${o.id}`, canonical({ name: o.name, hours: o.hours ?? null })]),
    ...routes.map((r): [string, string] => {
      const { createdAt: _created, updatedAt: _updated, ...fields } = routeRecord(r);
      return [`route ${r.id}`, canonical(fields)];
    }),
  ]);
}

type DeclarativeCalls = Pick<ConfigCalls, 'config.apply'>;

/** Applies the declarative file in one transaction: all of it, or nothing. */
export function declarativeHandlers(deps: WriteDeps): ActorHandlers<DeclarativeCalls> {
  return {
    'config.apply': (doc: Declarative) => write(deps, 'import', async (em, audit) => {
      const now = deps.now();
      const before = await declared(em);
      const counts = { created: 0, updated: 0 };
      const count = (created: boolean) => { counts[created ? 'created' : 'updated']++; };
      const step = async (where: string, fn: () => Promise<{ created: boolean }>) => {
        try {
          count((await fn()).created);
          await em.flush();
        } catch (err) {
          if (err instanceof GatewayError) {
            throw new GatewayError(err.code, `${where}${err.field ? `.${err.field}` : ''}: ${err.detail}`, err.field);
          }
          throw err;
        }
      };
      const cycle = findCycle(doc.roles);
      if (cycle) throw new GatewayError('role.cycle', `roles.${cycle[0]}.implies: These implies would make a role imply itself: ${cycle.join(' → ')}.`, 'implies');
      for (const role of rolesInOrder(doc.roles)) await step(`roles.${role.name}`, () => putRole(em, role, now));
      for (const org of doc.organisations) await step(`organisations.${org.id}`, () => putOrganisation(em, org, now));
      for (const route of doc.routes) await step(`routes.${route.id}`, () => putRoute(em, route, now));
      // One line for the whole file (spec 1.3 rule 7), naming what moved; a file that moved nothing writes none.
      const after = await declared(em);
      const added = [...after.keys()].filter((k) => !before.has(k));
      const updated = [...after.keys()].filter((k) => before.has(k) && before.get(k) !== after.get(k));
      if (added.length + updated.length > 0) {
        audit.note({ action: 'config.apply', target: { kind: 'gateway', name: 'declarative configuration' }, detail: summarise({ added, updated }) });
      }
      return counts;
    }),
  };
}
