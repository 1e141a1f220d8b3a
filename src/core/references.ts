/** Existence checks a write makes against the database, inside its transaction. */
import type { EntityManager } from '@mikro-orm/core';
import { GatewayError, invalidField } from '../http/errors.ts';
import { Account, Organisation, Role, Route } from '../store/entities.ts';

export async function assertRolesExist(em: EntityManager, names: readonly string[], field: string): Promise<void> {
  if (names.length === 0) return;
  const found = new Set((await em.find(Role, { name: { $in: [...names] } }, { fields: ['name'] })).map((r) => r.name));
  const missing = names.filter((n) => !found.has(n));
  if (missing.length > 0) {
    throw new GatewayError('role.unknown', `${missing.length === 1 ? 'The role' : 'The roles'} ${missing.map((m) => `"${m}"`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} not in the roles catalogue; create ${missing.length === 1 ? 'it' : 'them'} first (PUT /api/roles/{name}).`, field);
  }
}

export async function assertOrganisationExists(em: EntityManager, id: string | null | undefined, field: string): Promise<void> {
  if (id === null || id === undefined) return;
  if (!(await em.findOne(Organisation, { id }, { fields: ['id'] }))) {
    throw new GatewayError('organisation.unknown', `The organisation "${id}" does not exist; create it first (PUT /api/organisations/{id}).`, field);
  }
}

export async function assertRoutesExist(em: EntityManager, ids: readonly string[], field: string): Promise<void> {
  const wanted = ids.filter((r) => r !== '*');
  if (wanted.length === 0) return;
  const found = new Set((await em.find(Route, { id: { $in: wanted } }, { fields: ['id'] })).map((r) => r.id));
  const missing = wanted.filter((n) => !found.has(n));
  if (missing.length > 0) throw invalidField(field, `No route has the id ${missing.map((m) => `"${m}"`).join(', ')}; name existing routes or "*".`);
}

/** An account by id, or by name (scripts and the CLI name accounts). */
export async function findAccount(em: EntityManager, idOrName: string): Promise<Account | null> {
  return (await em.findOne(Account, { id: idOrName })) ?? em.findOne(Account, { name: idOrName });
}
