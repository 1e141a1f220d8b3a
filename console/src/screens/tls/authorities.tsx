/**
 * Trusted authorities (spec 1.2 rule 22): the certificates, beside the public authorities the
 * gateway carries, that an https upstream's chain may lead to. Public certificates only: a PEM
 * with a private key is refused by the API, with the reason.
 */
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ActionButton, ErrorLine, formatTime } from '../../components/common.tsx';
import { RemoveButton } from './confirm.tsx';
import { Field } from '../../components/field.tsx';
import { PemInput } from './pem-input.tsx';
import type { TrustedAuthority } from './types.ts';

export function AuthoritiesPanel({ authorities, refresh }: { authorities: readonly TrustedAuthority[]; refresh: () => Promise<void> }) {
  const [name, setName] = useState('');
  const [pem, setPem] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [listError, setListError] = useState<unknown>(null);
  return (
    <>
      <p class="muted">For the calls the gateway makes to https upstreams: they trust the public authorities the gateway carries and these. The upstream's certificate must still carry the host of the route's address, whichever authority signed it.</p>
      {authorities.length === 0 ? <p class="notice">No authority added: only the public ones are trusted.</p> : (
        <div class="table-wrap">
          <table aria-label="Trusted authorities">
            <thead><tr><th>Name</th><th>Subjects</th><th>Valid until</th><th>Fingerprint (SHA-256)</th><th>Actions</th></tr></thead>
            <tbody>
              {authorities.map((a) => (
                <tr>
                  <td><strong>{a.name}</strong>{a.count > 1 && <div class="muted">{a.count} certificates</div>}</td>
                  <td>{a.subjects.map((s) => <div>{s}</div>)}</td>
                  <td>{formatTime(a.notAfter)}</td>
                  <td><code class="fingerprint">{a.fingerprint}</code></td>
                  <td><RemoveButton what={a.name} onError={setListError} run={async () => {
                    await api('DELETE', `/api/trusted-authorities/${a.id}`);
                    await refresh();
                  }} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorLine error={listError} />
      <form class="panel" aria-label="Add a trusted authority" onSubmit={(e) => e.preventDefault()}>
        <div class="filters">
          <Field label="Authority name">
            <input value={name} maxLength={100} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
          </Field>
        </div>
        <PemInput label="Authority certificate" value={pem} onInput={setPem} required hint="One certificate or several (a bundle). Never a private key." />
        <div class="actions">
          <ActionButton label="Add the authority" kind="primary" onError={setError} disabled={name.trim() === '' || pem.trim() === ''} run={async () => {
            await api('POST', '/api/trusted-authorities', { name: name.trim(), pem });
            setName('');
            setPem('');
            await refresh();
          }} />
        </div>
        <ErrorLine error={error} />
      </form>
    </>
  );
}
