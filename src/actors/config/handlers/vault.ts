import { VaultEntry } from '../../../store/entities.ts';
import { seal, unseal } from '../../../core/vault/seal.ts';
import { vaultScope } from '../../../core/vault/vault-input.ts';
import { assertOrganisationExists } from '../../../core/references.ts';
import type { ConfigCalls, VaultRecord } from '../messages.ts';
import { write, type WriteDeps } from '../../write.ts';
import type { ActorHandlers } from '../../../workers/actor-runtime.ts';

type VaultCalls = Pick<ConfigCalls, 'vault.put' | 'vault.delete' | 'vault.list'>;

/** The row id doubles as the sealing context: a value moved to another name does not open. */
export function vaultId(organisation: string | null, name: string): string {
  return `${vaultScope(organisation)}/${name}`;
}

export function vaultHandlers(deps: WriteDeps): ActorHandlers<VaultCalls> {
  return {
    'vault.put': ({ organisation, name, value }) => write(deps, 'vault', async (em, audit) => {
      await assertOrganisationExists(em, organisation, 'organisation');
      const id = vaultId(organisation, name);
      const sealed = seal(deps.masterKey, id, value);
      const now = deps.now();
      const existing = await em.findOne(VaultEntry, { id });
      if (existing) {
        em.assign(existing, { sealed, updatedAt: now });
      } else {
        em.create(VaultEntry, { id, scope: vaultScope(organisation), name, sealed, createdAt: now, updatedAt: now });
      }
      await em.flush();
      // The name only: the value never enters the trail, not even masked (spec 1.3, vault).
      audit.note({
        action: existing ? 'vault.update' : 'vault.create', target: { kind: 'vault', id, name }, organisation,
        detail: existing ? 'value replaced' : 'created',
      });
      return { created: !existing };
    }),
    'vault.delete': ({ organisation, name }) => write(deps, 'vault', async (em, audit) => {
      const id = vaultId(organisation, name);
      if ((await em.nativeDelete(VaultEntry, { id })) === 0) return false;
      audit.note({ action: 'vault.delete', target: { kind: 'vault', id, name }, organisation, detail: 'deleted' });
      return true;
    }),
    'vault.list': async ({ organisation }) => {
      const rows = await deps.store.em().find(VaultEntry, { scope: vaultScope(organisation) }, { orderBy: { name: 'asc' } });
      return rows.map((r): VaultRecord => {
        let readable = true;
        try {
          unseal(deps.masterKey, r.id, r.sealed);
        } catch {
          readable = false;
        }
        return { name: r.name, scope: organisation ?? 'app', readable, createdAt: r.createdAt, updatedAt: r.updatedAt };
      });
    },
  };
}
