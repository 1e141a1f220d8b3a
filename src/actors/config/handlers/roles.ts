import type { EntityManager } from '@mikro-orm/core';
import { GatewayError } from '../../../http/errors.ts';
import { Account, Role, Route, Token } from '../../../store/entities.ts';
import { findCycle } from '../../../pipeline/roles.ts';
import type { RoleInput } from '../../../core/roles/role-input.ts';
import { assertRolesExist } from '../../../core/references.ts';
import type { ConfigCalls } from '../messages.ts';
import { write, type WriteDeps } from '../../write.ts';
import type { ActorHandlers } from '../../../workers/actor-runtime.ts';

/** Creates or replaces a role; an implied role must exist, and no cycle may form. */
export async function putRole(em: EntityManager, input: RoleInput, now: number): Promise<{ created: boolean }> {
  await assertRolesExist(em, input.implies.filter((r) => r !== input.name), 'implies');
  const all = await em.find(Role, {});
  const graph = all.filter((r) => r.name !== input.name).map((r) => ({ name: r.name, implies: r.implies }));
  graph.push({ name: input.name, implies: input.implies });
  const cycle = findCycle(graph);
  if (cycle) throw new GatewayError('role.cycle', `These implies would make a role imply itself: ${cycle.join(' → ')}.`, 'implies');
  const existing = all.find((r) => r.name === input.name);
  if (existing) {
    existing.implies = input.implies;
    existing.updatedAt = now;
    return { created: false };
  }
  em.create(Role, { name: input.name, implies: input.implies, createdAt: now, updatedAt: now });
  return { created: true };
}

/** Who still names a role: a deletion would silently change what they open. */
async function usersOfRole(em: EntityManager, name: string): Promise<string[]> {
  // In turn: inside a write this is one transaction's connection, which runs one query at a time.
  const roles = await em.find(Role, {});
  const routes = await em.find(Route, {});
  const accounts = await em.find(Account, {});
  const tokens = await em.find(Token, { revokedAt: null });
  return [
    ...roles.filter((r) => r.implies.includes(name)).map((r) => `role ${r.name}`),
    ...routes.filter((r) => r.rule?.roles.includes(name) || r.endpointRules.some((e) => e.roles.includes(name))).map((r) => `route ${r.id}`),
    ...accounts.filter((a) => a.roles.includes(name)).map((a) => `account ${a.name}`),
    ...tokens.filter((t) => t.roles?.includes(name)).map((t) => `token ${t.name}`),
  ];
}

type RoleCalls = Pick<ConfigCalls, 'role.put' | 'role.delete'>;

export function roleHandlers(deps: WriteDeps): ActorHandlers<RoleCalls> {
  return {
    'role.put': (input) => write(deps, 'role', async (em, audit) => {
      const old = await em.findOne(Role, { name: input.name });
      const before = old ? { implies: [...old.implies] } : null;
      const out = await putRole(em, input, deps.now());
      await em.flush();
      audit.note({ target: { kind: 'role', id: input.name, name: input.name }, before, after: { implies: [...input.implies] } });
      return out;
    }),
    'role.delete': ({ name }) => write(deps, 'role', async (em, audit) => {
      const users = await usersOfRole(em, name);
      if (users.length > 0) {
        const shown = users.slice(0, 10).join(', ') + (users.length > 10 ? ` and ${users.length - 10} more` : '');
        throw new GatewayError('role.in-use', `The role "${name}" is still named by ${shown}; change them first.`);
      }
      const old = await em.findOne(Role, { name });
      if (!old) return false;
      await em.nativeDelete(Role, { name });
      audit.note({ target: { kind: 'role', id: name, name }, before: { implies: [...old.implies] }, after: null });
      return true;
    }),
  };
}
