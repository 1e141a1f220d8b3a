/**
 * Accounts (docs/core.md): who may sign in to the console and the data plane. app-admin lists,
 * creates, disables and enables them; granting capabilities is root's alone, and the API says so.
 */
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ActionButton, ErrorLine, Notice, useFormSubmit } from '../../components/common.tsx';
import { useSession } from '../../session.ts';
import { joined, splitList, useLoad, type AccountRow } from './load.ts';

const CAPABILITIES = ['root', 'infra-admin', 'app-admin', 'gateway-admin', 'org-admin'] as const;

export function AccountsPanel() {
  const session = useSession();
  const accounts = useLoad<{ accounts: AccountRow[] }>('/api/accounts');
  const [rowError, setRowError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);

  if (accounts.error && !accounts.data) return <ErrorLine error={accounts.error} />;
  if (!accounts.data) return <p class="muted" aria-busy="true">Loading the accounts…</p>;

  // The organisation chosen at the top narrows the list to its members.
  const org = session.organisation;
  const shown = org ? accounts.data.accounts.filter((a) => a.organisation === org) : accounts.data.accounts;
  return (
    <>
      {org && <p class="muted">Members of organisation {org}: {shown.length} of {accounts.data.accounts.length} accounts.</p>}
      <ErrorLine error={rowError} />
      <div class="table-wrap">
        <table aria-label="Accounts">
          <thead>
            <tr><th>Name</th><th>Capabilities</th><th>Roles</th><th>Organisation</th><th>State</th><th>Actions</th></tr>
          </thead>
          <tbody>
            {shown.length === 0 && <tr><td colSpan={6} class="muted">No account.</td></tr>}
            {shown.map((a) => (
              <tr key={a.id}>
                <td>{a.name}</td>
                <td>{joined(a.capabilities)}</td>
                <td>{joined(a.roles)}</td>
                <td>{a.organisation ?? '—'}</td>
                <td>{a.disabled ? <span class="badge bad">Disabled</span> : <span class="badge ok">Active</span>}</td>
                <td class="actions">
                  <ActionButton
                    label={a.disabled ? 'Enable' : 'Disable'}
                    ariaLabel={`${a.disabled ? 'Enable' : 'Disable'} ${a.name}`}
                    kind={a.disabled ? undefined : 'danger'}
                    onError={setRowError}
                    run={async () => {
                      await api('PATCH', `/api/accounts/${encodeURIComponent(a.id)}`, { disabled: !a.disabled });
                      setDone(`${a.name} is ${a.disabled ? 'enabled' : 'disabled'}${a.disabled ? '' : '; its sessions ended'}.`);
                      accounts.reload();
                    }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {done && <Notice>{done}</Notice>}
      <NewAccount onCreated={(name) => { setDone(`Account ${name} created.`); accounts.reload(); }} />
    </>
  );
}

function NewAccount({ onCreated }: { onCreated: (name: string) => void }) {
  const session = useSession();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [roles, setRoles] = useState('');
  const [capabilities, setCapabilities] = useState<string[]>([]);
  const [organisation, setOrganisation] = useState('');
  const { busy, error, submit } = useFormSubmit(async () => {
    await api('POST', '/api/accounts', { name, password, roles: splitList(roles), capabilities, ...(organisation ? { organisation } : {}) });
    onCreated(name);
    setName('');
    setPassword('');
    setRoles('');
    setCapabilities([]);
    setOrganisation('');
  });

  return (
    <form class="panel access-form" onSubmit={submit} aria-labelledby="new-account">
      <h3 id="new-account">New account</h3>
      <div class="filters">
        <label>Name<input value={name} required autocomplete="off" onInput={(e) => setName(e.currentTarget.value)} /></label>
        <label>Password<input type="password" value={password} required autocomplete="new-password" onInput={(e) => setPassword(e.currentTarget.value)} /></label>
        <label>Roles<input value={roles} placeholder="staff, billing" onInput={(e) => setRoles(e.currentTarget.value)} /></label>
        <label>
          Organisation
          <select value={organisation} onChange={(e) => setOrganisation(e.currentTarget.value)}>
            <option value="">None</option>
            {session.organisations.map((o) => <option value={o.id}>{o.name}</option>)}
          </select>
        </label>
      </div>
      <fieldset class="capabilities">
        <legend>Console capabilities (granted by root only)</legend>
        {CAPABILITIES.map((c) => (
          <label class="inline" key={c}>
            <input
              type="checkbox"
              checked={capabilities.includes(c)}
              onChange={(e) => setCapabilities((held) => e.currentTarget.checked ? [...held, c] : held.filter((x) => x !== c))}
            />
            {c}
          </label>
        ))}
      </fieldset>
      <ErrorLine error={error} />
      <button type="submit" class="primary" disabled={busy}>Create account</button>
    </form>
  );
}
