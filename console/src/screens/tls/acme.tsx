/**
 * ACME authorities (spec 1.2 rule 19, 2.5; docs/tls-acme.md), licensed edition: each a named ACME
 * account. The HMAC key is written once and never shown again; terms are never assumed.
 */
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ActionButton, ErrorLine, Notice } from '../../components/common.tsx';
import { RemoveButton } from './confirm.tsx';
import { Field } from '../../components/field.tsx';
import { PemInput } from './pem-input.tsx';
import type { Acme } from './types.ts';

function AddAuthority({ refresh }: { refresh: () => Promise<void> }) {
  const [f, setF] = useState({ name: '', directory: '', email: '', kid: '', hmacKey: '', challenge: 'http-01', terms: false });
  const [rootCa, setRootCa] = useState('');
  const [error, setError] = useState<unknown>(null);
  const field = (key: 'name' | 'directory' | 'email' | 'kid' | 'hmacKey') => ({
    value: f[key],
    onInput: (e: Event) => setF({ ...f, [key]: (e.currentTarget as HTMLInputElement).value }),
  });
  return (
    <form class="panel" aria-label="Add an ACME authority" onSubmit={(e) => e.preventDefault()}>
      <div class="filters">
        <Field label="Authority label" hint="Its orders are named Ask <label>."><input {...field('name')} maxLength={100} /></Field>
        <Field grow label="Directory URL" hint="The authority's ACME directory, an https address it publishes."><input {...field('directory')} type="url" /></Field>
        <Field label="Contact e-mail" hint="Some authorities require one."><input {...field('email')} type="email" /></Field>
        <Field label="Challenge tried first">
          <select value={f.challenge} onChange={(e) => setF({ ...f, challenge: (e.currentTarget as HTMLSelectElement).value })}>
            <option value="http-01">HTTP-01 (port 80)</option>
            <option value="tls-alpn-01">TLS-ALPN-01 (port 443)</option>
          </select>
        </Field>
      </div>
      <div class="filters">
        <Field label="EAB key id" hint="External Account Binding: required by some authorities, ignored by others."><input {...field('kid')} /></Field>
        <Field label="EAB HMAC key" hint="Kept sealed, never shown again; or a $name of the vault."><input {...field('hmacKey')} type="password" autocomplete="off" placeholder="base64url, or $vault-name" /></Field>
      </div>
      <PemInput label="Root CA of the ACME server (private authorities only)" value={rootCa} onInput={setRootCa} rows={3} />
      <label class="inline">
        <input type="checkbox" checked={f.terms} onChange={(e) => setF({ ...f, terms: (e.currentTarget as HTMLInputElement).checked })} />
        I accept the authority's terms of service
      </label>
      <div class="actions">
        <ActionButton label="Add the ACME authority" kind="primary" onError={setError} disabled={f.name.trim() === '' || f.directory.trim() === ''} run={async () => {
          await api('POST', '/api/acme/authorities', {
            name: f.name.trim(), directory: f.directory.trim(), termsAccepted: f.terms, challenge: f.challenge,
            ...(f.email.trim() ? { email: f.email.trim() } : {}),
            ...(rootCa.trim() ? { rootCa } : {}),
            ...(f.kid.trim() ? { eab: { kid: f.kid.trim(), hmacKey: f.hmacKey.trim() } } : {}),
          });
          setF({ name: '', directory: '', email: '', kid: '', hmacKey: '', challenge: 'http-01', terms: false });
          setRootCa('');
          await refresh();
        }} />
      </div>
      <ErrorLine error={error} />
    </form>
  );
}

export function AcmePanel({ acme, refresh }: { acme: Acme; refresh: () => Promise<void> }) {
  const [error, setError] = useState<unknown>(null);
  if ('refused' in acme) return <Notice>{acme.refused}</Notice>;
  return (
    <>
      {acme.authorities.length === 0 ? <p class="notice">No ACME authority yet.</p> : (
        <div class="table-wrap">
          <table aria-label="ACME authorities">
            <thead><tr><th>Authority</th><th>Directory</th><th>Terms</th><th>Account</th><th>Orders</th><th>Actions</th></tr></thead>
            <tbody>
              {acme.authorities.map((a) => (
                <tr>
                  <td><strong>{a.name}</strong>{a.email && <div class="muted">{a.email}</div>}{a.eab && <div class="muted">EAB {a.eab.kid}</div>}</td>
                  <td><code>{a.directory}</code></td>
                  <td>{a.termsAccepted ? <span class="badge ok">accepted</span> : <span class="badge warn">not accepted</span>}</td>
                  <td>{a.accountUrl ? <code>{a.accountUrl}</code> : <span class="muted">made at the first order</span>}</td>
                  <td>{a.orders} {a.armed ? <span class="badge ok">armed</span> : <span class="badge">not armed</span>}</td>
                  <td><RemoveButton what={a.name} onError={setError} run={async () => {
                    await api('DELETE', `/api/acme/authorities/${a.id}`);
                    await refresh();
                  }} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorLine error={error} />
      <AddAuthority refresh={refresh} />
    </>
  );
}
