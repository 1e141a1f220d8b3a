/**
 * The roles catalogue (docs/core.md): each role with the roles it implies and everything it grants
 * through the hierarchy. A role is created or replaced whole; the API refuses a cycle and says which.
 */
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ErrorLine, Notice, useFormSubmit } from '../../components/common.tsx';
import { joined, splitList, useLoad } from './load.ts';

interface RoleRow {
  readonly name: string;
  readonly implies: readonly string[];
  readonly grants: readonly string[];
}

export function RolesPanel() {
  const roles = useLoad<{ roles: RoleRow[] }>('/api/roles');
  const [done, setDone] = useState<string | null>(null);

  if (roles.error && !roles.data) return <ErrorLine error={roles.error} />;
  if (!roles.data) return <p class="muted" aria-busy="true">Loading the roles…</p>;
  const sorted = [...roles.data.roles].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <>
      <div class="table-wrap">
        <table aria-label="Roles">
          <thead>
            <tr><th>Role</th><th>Implies</th><th>Grants (through the hierarchy)</th></tr>
          </thead>
          <tbody>
            {sorted.length === 0 && <tr><td colSpan={3} class="muted">No role yet.</td></tr>}
            {sorted.map((r) => (
              <tr key={r.name}>
                <td>{r.name}</td>
                <td>{joined(r.implies)}</td>
                <td>{joined(r.grants)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {done && <Notice>{done}</Notice>}
      <RoleForm known={new Set(sorted.map((r) => r.name))} onSaved={(name, created) => { setDone(`Role ${name} ${created ? 'created' : 'replaced'}.`); roles.reload(); }} />
    </>
  );
}

function RoleForm({ known, onSaved }: { known: ReadonlySet<string>; onSaved: (name: string, created: boolean) => void }) {
  const [name, setName] = useState('');
  const [implies, setImplies] = useState('');
  const { busy, error, submit } = useFormSubmit(async () => {
    await api('PUT', `/api/roles/${encodeURIComponent(name)}`, { implies: splitList(implies) });
    onSaved(name, !known.has(name));
    setName('');
    setImplies('');
  });

  return (
    <form class="panel access-form" onSubmit={submit} aria-labelledby="role-form">
      <h3 id="role-form">Create or replace a role</h3>
      <div class="filters">
        <label>Role name<input value={name} required autocomplete="off" onInput={(e) => setName(e.currentTarget.value)} /></label>
        <label>Implies<input value={implies} placeholder="staff, reader" onInput={(e) => setImplies(e.currentTarget.value)} /></label>
      </div>
      <ErrorLine error={error} />
      <button type="submit" class="primary" disabled={busy}>Save role</button>
    </form>
  );
}
