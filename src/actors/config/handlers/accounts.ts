import { GatewayError } from '../../../http/errors.ts';
import { Account, Session, Token } from '../../../store/entities.ts';
import { newId } from '../../../core/secrets.ts';
import { assertOrganisationExists, assertRolesExist } from '../../../core/references.ts';
import type { ConfigCalls } from '../messages.ts';
import { write, type WriteDeps } from '../../write.ts';
import type { ActorHandlers } from '../../../workers/actor-runtime.ts';

/** An account as the trail compares it; the hash is there so that a new password shows as a change (masked). */
function accountRecord(a: Account) {
  return { name: a.name, roles: [...a.roles], capabilities: [...a.capabilities], organisation: a.organisation ?? null, disabled: a.disabled, passwordHash: a.passwordHash };
}

/** Only root changes or deletes an account holding console capabilities (judged on the row, in the transaction). */
function guardHolder(account: Account, byRoot: boolean): void {
  if (!byRoot && account.capabilities.length > 0) {
    throw new GatewayError('capability', 'Only root can change or delete an account that holds console capabilities.');
  }
}

/** What an account's deletion revoked, by kind: "personal token", "admin token and 2 personal tokens". */
function tokenCount(tokens: ReadonlyArray<{ kind: string }>): string {
  const byKind = new Map<string, number>();
  for (const t of tokens) byKind.set(t.kind, (byKind.get(t.kind) ?? 0) + 1);
  const parts = [...byKind].sort(([a], [b]) => a.localeCompare(b)).map(([kind, n]) => (n === 1 ? `${kind} token` : `${n} ${kind} tokens`));
  return parts.join(' and ');
}

type AccountCalls = Pick<ConfigCalls, 'account.create' | 'account.update' | 'account.delete' | 'account.password'>;

export function accountHandlers(deps: WriteDeps): ActorHandlers<AccountCalls> {
  return {
    'account.create': (input) => write(deps, 'account', async (em, audit) => {
      await assertRolesExist(em, input.roles, 'roles');
      await assertOrganisationExists(em, input.organisation, 'organisation');
      if (await em.findOne(Account, { name: input.name }, { fields: ['id'] })) {
        throw new GatewayError('account.name-taken', `An account named "${input.name}" exists already.`, 'name');
      }
      const now = deps.now();
      const id = newId();
      const account = em.create(Account, { id, ...input, roles: [...input.roles], capabilities: [...input.capabilities], createdAt: now, updatedAt: now });
      await em.flush();
      audit.note({ target: { kind: 'account', id, name: input.name }, organisation: input.organisation, before: null, after: accountRecord(account) });
      return { id };
    }),
    'account.update': ({ id, change, byRoot }) => write(deps, 'account', async (em, audit) => {
      const account = await em.findOne(Account, { id });
      if (!account) return false;
      guardHolder(account, byRoot);
      const before = accountRecord(account);
      if (account.name === 'root' && (change.disabled === true || (change.capabilities && !change.capabilities.includes('root')))) {
        throw new GatewayError('account.protected', 'The root account cannot be disabled or lose the root capability.');
      }
      if (change.roles) await assertRolesExist(em, change.roles, 'roles');
      await assertOrganisationExists(em, change.organisation, 'organisation');
      em.assign(account, {
        ...(change.passwordHash !== undefined ? { passwordHash: change.passwordHash } : {}),
        ...(change.roles ? { roles: [...change.roles] } : {}),
        ...(change.capabilities ? { capabilities: [...change.capabilities] } : {}),
        ...(change.organisation !== undefined ? { organisation: change.organisation } : {}),
        ...(change.disabled !== undefined ? { disabled: change.disabled } : {}),
        updatedAt: deps.now(),
      });
      // A new password or a disabled account ends the sessions opened before.
      if (change.passwordHash !== undefined || change.disabled === true) await em.nativeDelete(Session, { account: id });
      await em.flush();
      audit.note({ target: { kind: 'account', id, name: account.name }, organisation: account.organisation ?? before.organisation, before, after: accountRecord(account) });
      return true;
    }),
    'account.password': ({ id, passwordHash, keepSession, target }) => write(deps, 'account', async (em, audit) => {
      const account = await em.findOne(Account, { id });
      if (!account) return false;
      account.passwordHash = passwordHash;
      account.updatedAt = deps.now();
      // The owner stays signed in where they changed it; every other session ends.
      await em.nativeDelete(Session, keepSession === null ? { account: id } : { account: id, id: { $ne: keepSession } });
      await em.flush();
      audit.note({ action: 'password.change', part: 'security', target: { kind: target, id, name: account.name }, organisation: account.organisation ?? null, detail: 'by its owner' });
      return true;
    }),
    'account.delete': ({ id, byRoot }) => write(deps, 'account', async (em, audit) => {
      const account = await em.findOne(Account, { id });
      if (!account) return false;
      guardHolder(account, byRoot);
      if (account.name === 'root') throw new GatewayError('account.protected', 'The root account cannot be deleted.');
      await em.nativeDelete(Session, { account: id });
      const live = await em.find(Token, { account: id, revokedAt: null }, { fields: ['id', 'kind', 'name'] });
      const revoked = await em.nativeUpdate(Token, { account: id, revokedAt: null }, { revokedAt: deps.now() });
      const before = accountRecord(account);
      em.remove(account);
      await em.flush();
      // Its tokens go with it: the line says so, as an organisation's says its vault entries went.
      const detail = revoked > 0 ? `deleted, with its ${tokenCount(live)} revoked` : undefined;
      audit.note({ target: { kind: 'account', id, name: before.name }, organisation: before.organisation, before, after: null, ...(detail !== undefined ? { detail } : {}) });
      // A personal token revoked is its account's security line (spec 6.1), however it ended.
      for (const t of live) {
        if (t.kind !== 'personal') continue;
        audit.note({ action: 'token.revoke', part: 'security', target: { kind: 'account', id, name: before.name }, organisation: before.organisation, detail: `${t.name} (with its account)` });
      }
      return true;
    }),
  };
}
