import type { Declarative } from '../../../core/declarative/document.ts';
import { rolesInOrder } from '../../../core/declarative/document.ts';
import { GatewayError } from '../../../http/errors.ts';
import { findCycle } from '../../../pipeline/roles.ts';
import type { ConfigCalls } from '../messages.ts';
import { putRole } from './roles.ts';
import { putOrganisation } from './organisations.ts';
import { putRoute } from './routes.ts';
import { write, type WriteDeps } from './deps.ts';
import type { ActorHandlers } from '../../../workers/actor-runtime.ts';

type DeclarativeCalls = Pick<ConfigCalls, 'config.apply'>;

/** Applies the declarative file in one transaction: all of it, or nothing. */
export function declarativeHandlers(deps: WriteDeps): ActorHandlers<DeclarativeCalls> {
  return {
    'config.apply': (doc: Declarative) => write(deps, 'import', async (em) => {
      const now = deps.now();
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
      return counts;
    }),
  };
}
