import type { EntityManager } from '@mikro-orm/core';
import { GatewayError } from '../../../http/errors.ts';
import { Account, Organisation, Route, VaultEntry } from '../../../store/entities.ts';
import type { OrganisationInput } from '../../../core/organisations/organisation-input.ts';
import { vaultScope } from '../../../core/vault/vault-input.ts';
import type { ConfigCalls } from '../messages.ts';
import { write, type WriteDeps } from './deps.ts';
import type { ActorHandlers } from '../../../workers/actor-runtime.ts';

export async function putOrganisation(em: EntityManager, input: OrganisationInput, now: number): Promise<{ created: boolean }> {
  const existing = await em.findOne(Organisation, { id: input.id });
  const hours = input.hours ? { timezone: input.hours.timezone, windows: input.hours.windows.map((w) => ({ ...w, days: [...w.days] })) } : null;
  if (existing) {
    em.assign(existing, { name: input.name, hours, updatedAt: now });
    return { created: false };
  }
  em.create(Organisation, { id: input.id, name: input.name, hours, createdAt: now, updatedAt: now });
  return { created: true };
}

type OrganisationCalls = Pick<ConfigCalls, 'organisation.put' | 'organisation.delete'>;

export function organisationHandlers(deps: WriteDeps): ActorHandlers<OrganisationCalls> {
  return {
    'organisation.put': (input) => write(deps, 'organisation', async (em) => {
      const out = await putOrganisation(em, input, deps.now());
      await em.flush();
      return out;
    }),
    'organisation.delete': ({ id }) => write(deps, 'organisation', async (em) => {
      const [members, routes] = await Promise.all([
        em.count(Account, { organisation: id }), em.count(Route, { organisation: id }),
      ]);
      if (members + routes > 0) {
        throw new GatewayError('organisation.in-use', `The organisation "${id}" still has ${members} member account(s) and ${routes} route(s); move them first.`);
      }
      await em.nativeDelete(VaultEntry, { scope: vaultScope(id) });
      return (await em.nativeDelete(Organisation, { id })) > 0;
    }),
  };
}
