/**
 * Tokens (docs/core.md), root's alone: the list without secrets, minting, revoking. A minted
 * secret lives in this component's memory only, shown once with a field to copy it from; the
 * gateway keeps its hash and no reload brings it back.
 */
import { useRef, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ActionButton, ErrorLine, formatTime, Notice, useFormSubmit } from '../../components/common.tsx';
import { joined, splitList, useLoad, type AccountRow } from './load.ts';

interface TokenRow {
  readonly id: string;
  readonly name: string;
  readonly kind: 'admin' | 'personal' | 'schedules';
  readonly account: string | null;
  readonly routes: readonly string[] | null;
  readonly roles: readonly string[] | null;
  readonly organisations: readonly string[] | null;
  readonly createdAt: number;
  readonly revokedAt: number | null;
}

interface Minted {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  readonly token: string;
}

const KIND_TEXT: Record<TokenRow['kind'], string> = {
  admin: 'admin (console rights, for scripts)',
  personal: 'personal (an account on the data plane)',
  schedules: 'schedules (the internal plane\'s scheduling API)',
};

export function TokensPanel() {
  const tokens = useLoad<{ tokens: TokenRow[] }>('/api/tokens');
  // Names for the account column; a refusal here leaves the ids showing.
  const accounts = useLoad<{ accounts: AccountRow[] }>('/api/accounts');
  const [minted, setMinted] = useState<Minted | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [rowError, setRowError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);

  if (tokens.error && !tokens.data) return <ErrorLine error={tokens.error} />;
  if (!tokens.data) return <p class="muted" aria-busy="true">Loading the tokens…</p>;
  const names = new Map((accounts.data?.accounts ?? []).map((a) => [a.id, a.name]));
  const rows = [...tokens.data.tokens].sort((a, b) => b.createdAt - a.createdAt || a.name.localeCompare(b.name));
  return (
    <>
      {minted && <Secret minted={minted} onDone={() => setMinted(null)} />}
      <ErrorLine error={rowError} />
      {done && <Notice>{done}</Notice>}
      <div class="table-wrap">
        <table aria-label="Tokens">
          <thead>
            <tr><th>Name</th><th>Kind</th><th>Account</th><th>Perimeter</th><th>Created</th><th>State</th><th>Actions</th></tr>
          </thead>
          <tbody>
            {rows.length === 0 && <tr><td colSpan={7} class="muted">No token yet.</td></tr>}
            {rows.map((t) => (
              <tr key={t.id}>
                <td>{t.name}</td>
                <td>{t.kind}</td>
                <td>{t.account === null ? '—' : names.get(t.account) ?? t.account}</td>
                <td>{t.kind === 'schedules' ? `routes ${joined(t.routes)}; roles ${joined(t.roles, 'none')}; organisations ${joined(t.organisations, 'none')}` : '—'}</td>
                <td>{formatTime(t.createdAt)}</td>
                <td>{t.revokedAt === null ? <span class="badge ok">Active</span> : <span class="badge bad">Revoked {formatTime(t.revokedAt)}</span>}</td>
                <td class="actions">
                  {t.revokedAt === null && (confirming === t.id ? (
                    <>
                      <ActionButton
                        label="Confirm revoke"
                        ariaLabel={`Confirm revoke ${t.name}`}
                        kind="danger"
                        onError={setRowError}
                        run={async () => {
                          await api('DELETE', `/api/tokens/${encodeURIComponent(t.id)}`);
                          setConfirming(null);
                          setDone(`Token ${t.name} is revoked: the gateway refuses it from now on.`);
                          tokens.reload();
                        }}
                      />
                      <button type="button" aria-label={`Keep ${t.name}`} onClick={() => setConfirming(null)}>Cancel</button>
                    </>
                  ) : (
                    <button type="button" class="danger" aria-label={`Revoke ${t.name}`} onClick={() => { setConfirming(t.id); setDone(null); }}>Revoke</button>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <NewToken
        accounts={accounts.data?.accounts ?? []}
        onMinted={(m) => { setMinted(m); setDone(null); tokens.reload(); }}
      />
    </>
  );
}

/** The secret, once: a read-only field to copy from, and the sentence that it will not come back. */
function Secret({ minted, onDone }: { minted: Minted; onDone: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const field = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(minted.token);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard permission: the field is selected, for the operator's own copy.
      field.current?.select();
      setCopied('The browser did not let the page copy: the secret is selected, copy it with the keyboard.');
    }
  };
  return (
    <section class="panel secret" aria-labelledby="token-secret">
      <h3 id="token-secret">Token {minted.name} created</h3>
      <p><strong>Copy the secret now: it will not be shown again.</strong> The gateway keeps only its SHA-256; a lost secret means a new token.</p>
      <div class="secret-row">
        <input
          ref={field}
          readOnly
          value={minted.token}
          aria-label={`Secret of token ${minted.name}`}
          spellcheck={false}
          autocomplete="off"
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" class="primary" onClick={() => void copy()}>Copy</button>
        <button type="button" onClick={onDone}>Done</button>
      </div>
      {copied && <Notice>{copied}</Notice>}
    </section>
  );
}

function NewToken({ accounts, onMinted }: { accounts: readonly AccountRow[]; onMinted: (m: Minted) => void }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<TokenRow['kind']>('admin');
  const [account, setAccount] = useState('');
  const [routes, setRoutes] = useState('*');
  const [roles, setRoles] = useState('');
  const [organisations, setOrganisations] = useState('');
  const { busy, error, submit } = useFormSubmit(async () => {
    // Each kind takes its own fields (the API refuses the others): an account, or a perimeter.
    const body = kind === 'schedules'
      ? { name, kind, routes: splitList(routes), roles: splitList(roles), organisations: splitList(organisations) }
      : { name, kind, ...(account ? { account } : {}) };
    onMinted(await api<Minted>('POST', '/api/tokens', body));
    setName('');
  });

  return (
    <form class="panel access-form" onSubmit={submit} aria-labelledby="new-token">
      <h3 id="new-token">New token</h3>
      <div class="filters">
        <label>Token name<input value={name} required autocomplete="off" onInput={(e) => setName(e.currentTarget.value)} /></label>
        <label>
          Kind
          <select value={kind} onChange={(e) => setKind(e.currentTarget.value as TokenRow['kind'])}>
            {(Object.keys(KIND_TEXT) as TokenRow['kind'][]).map((k) => <option value={k}>{KIND_TEXT[k]}</option>)}
          </select>
        </label>
        {kind === 'schedules' ? (
          <>
            <label>Routes<input value={routes} placeholder="* or billing, orders" onInput={(e) => setRoutes(e.currentTarget.value)} /></label>
            <label>Roles<input value={roles} placeholder="jobs" onInput={(e) => setRoles(e.currentTarget.value)} /></label>
            <label>Organisations<input value={organisations} placeholder="* or acme, globex; empty: none" onInput={(e) => setOrganisations(e.currentTarget.value)} /></label>
          </>
        ) : (
          <label>
            Account
            <select value={account} onChange={(e) => setAccount(e.currentTarget.value)}>
              <option value="">{kind === 'admin' ? 'The signed-in account' : 'Choose an account'}</option>
              {accounts.map((a) => <option value={a.id}>{a.name}</option>)}
            </select>
          </label>
        )}
      </div>
      <ErrorLine error={error} />
      <button type="submit" class="primary" disabled={busy}>Create token</button>
    </form>
  );
}
