/**
 * Certificates from the file system (spec 1.2 rule 20): the mounts of this node holding a
 * certificate, pickable when a key lies beside it, or two paths typed by the operator.
 */
import { useEffect, useState } from 'preact/hooks';
import { get } from '../../api.ts';
import { ActionButton, ErrorLine, formatTime, Notice } from '../../components/common.tsx';
import { Field } from '../../components/field.tsx';
import { type FormProps } from './field.tsx';
import type { MountCandidate } from './types.ts';

export function FileForm({ create }: FormProps) {
  const [mounts, setMounts] = useState<readonly MountCandidate[] | null>(null);
  const [certPath, setCertPath] = useState('');
  const [keyPath, setKeyPath] = useState('');
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    get<{ mounts: MountCandidate[] }>('/api/certificates/mounts').then((r) => setMounts(r.mounts), setError);
  }, []);
  return (
    <form onSubmit={(e) => e.preventDefault()} aria-label="From the file system">
      <p class="muted">Files mounted by the runtime and renewed by it. Only their paths are kept; each node reads them again every 30 s and reloads its doors when they change. Their content is never shown.</p>
      {mounts === null ? <p class="muted">Looking at the mounts…</p> : mounts.length === 0 ? (
        <Notice>No mount of this node holds a certificate file.</Notice>
      ) : (
        <div class="table-wrap">
          <table>
            <thead><tr><th>Certificate file</th><th>Key beside it</th><th>Names</th><th>Valid until</th><th>Use</th></tr></thead>
            <tbody>
              {mounts.map((m) => (
                <tr>
                  <td><code>{m.certPath}</code></td>
                  <td>{m.keyPath ? <code>{m.keyPath}</code> : <span class="badge bad">no key: cannot be picked</span>}</td>
                  <td class="names">{m.names.join(', ')}</td>
                  <td>{formatTime(m.notAfter)}</td>
                  <td>{m.pickable && m.keyPath && (
                    <ActionButton label="Use" ariaLabel={`Use ${m.certPath}`} onError={setError} run={() => create({ source: 'file', certPath: m.certPath, keyPath: m.keyPath })} />
                  )}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div class="filters">
        <Field grow label="Certificate path"><input value={certPath} placeholder="/etc/tls/console/tls.crt" onInput={(e) => setCertPath((e.currentTarget as HTMLInputElement).value)} /></Field>
        <Field grow label="Key path"><input value={keyPath} placeholder="/etc/tls/console/tls.key" onInput={(e) => setKeyPath((e.currentTarget as HTMLInputElement).value)} /></Field>
      </div>
      <div class="actions">
        <ActionButton label="Use these files" kind="primary" onError={setError} disabled={certPath.trim() === '' || keyPath.trim() === ''}
          run={() => create({ source: 'file', certPath: certPath.trim(), keyPath: keyPath.trim() })} />
      </div>
      <ErrorLine error={error} />
    </form>
  );
}
