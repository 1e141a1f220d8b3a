import type { EntityManager } from '@mikro-orm/core';
import { GatewayError } from '../../../http/errors.ts';
import { Account, Organisation, Route, Schedule, VaultEntry } from '../../../store/entities.ts';
import { leavePerimeters, perimetersLeft } from './tokens.ts';
import type { OrganisationInput } from '../../../core/organisations/organisation-input.ts';
import { vaultScope } from '../../../core/vault/vault-input.ts';
import type { ConfigCalls } from '../messages.ts';
import { write, type WriteDeps } from '../../write.ts';
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

function organisationRecord(o: Organisation) {
  return { name: o.name, hours: o.hours ?? null };
}

type OrganisationCalls = Pick<ConfigCalls, 'organisation.put' | 'organisation.delete'>;

export function organisationHandlers(deps: WriteDeps): ActorHandlers<OrganisationCalls> {
  return {
    'organisation.put': (input) => write(deps, 'organisation', async (em, audit) => {
      const old = await em.findOne(Organisation, { id: input.id });
      const before = old ? organisationRecord(old) : null;
      const out = await putOrganisation(em, input, deps.now());
      await em.flush();
      const after = organisationRecord((await em.findOne(Organisation, { id: input.id }))!);
      audit.note({ target: { kind: 'organisation', id: input.id, name: input.name }, organisation: input.id, before, after });
      return out;
    }),
    'organisation.delete': ({ id }) => write(deps, 'organisation', async (em, audit) => {
      // In turn: a transaction is one connection, which runs one query at a time.
      const members = await em.count(Account, { organisation: id });
      const routes = await em.count(Route, { organisation: id });
      if (members + routes > 0) {
        throw new GatewayError('organisation.in-use', `The organisation "${id}" still has ${members} member account(s) and ${routes} route(s); move them first.`);
      }
      // A schedule that may still fire acts for the organisation with its vault: were the id taken
      // again, it would act for the new one. Finished and stopped ones never fire again.
      const schedules = await em.find(Schedule, { organisation: id, finished: false, stopped: null }, { fields: ['id', 'name'], orderBy: { id: 'asc' }, limit: 11 });
      if (schedules.length > 0) {
        const shown = schedules.slice(0, 10).map((s) => (s.name ? `"${s.name}" (${s.id})` : s.id)).join(', ') + (schedules.length > 10 ? ' and more' : '');
        throw new GatewayError('organisation.in-use', `The organisation "${id}" still has schedules that act for it: ${shown}; delete them first (root, or the token that wrote them).`);
      }
      const old = await em.findOne(Organisation, { id });
      if (!old) return false;
      const before = organisationRecord(old);
      const secrets = await em.count(VaultEntry, { scope: vaultScope(id) });
      await em.nativeDelete(VaultEntry, { scope: vaultScope(id) });
      await em.nativeDelete(Organisation, { id });
      const tokens = await leavePerimeters(em, 'organisations', id);
      audit.note({
        target: { kind: 'organisation', id, name: old.name }, organisation: id, before, after: null,
        detail: (secrets > 0 ? `deleted, with its ${secrets} vault ${secrets === 1 ? 'entry' : 'entries'}` : 'deleted') + perimetersLeft(tokens),
      });
      return true;
    }),
  };
}
