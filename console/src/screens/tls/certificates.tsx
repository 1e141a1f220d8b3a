/**
 * The certificates held (spec 1.2 rules 1, 2, 10, 25): what each carries, where it is placed, its
 * state and a countdown to its end. The countdown starts from `expiresIn`, which the gateway
 * computes on its own clock, and runs down by the time elapsed since that answer: the browser's
 * clock never decides whether a certificate has expired.
 */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError, download } from '../../api.ts';
import { ActionButton, ErrorLine, formatDuration, formatTime, useTick } from '../../components/common.tsx';
import { RemoveButton } from './confirm.tsx';
import { PemInput } from './pem-input.tsx';
import { PLANE_LABEL, PLANES, type Certificate, type CertState, type Plane } from './types.ts';

const SOURCE_LABEL: Record<Certificate['source'], string> = {
  import: 'Imported', 'self-signed': 'Self-signed', csr: 'Signing request', file: 'File system', acme: 'ACME order',
};

const STATE_CLASS: Record<CertState, string> = {
  active: 'ok', pending: 'warn', requesting: 'warn', 'not-yet-valid': 'warn', expired: 'bad', unsealable: 'bad', refused: 'bad', missing: 'bad',
};

/** Within this many days the countdown is shown as a warning (the expiry digest's default horizon). */
const WARN_DAYS = 30;

function Countdown({ cert, fetchedAt }: { cert: Certificate; fetchedAt: number }) {
  useTick(1000);
  if (cert.expiresIn === null) return <span class="muted">—</span>;
  const left = cert.expiresIn * 1000 - (performance.now() - fetchedAt);
  const kind = left <= 0 ? 'bad' : left < WARN_DAYS * 86_400_000 ? 'warn' : 'ok';
  return (
    <span class="countdown">
      <span class={`badge ${kind}`}>{left <= 0 ? `expired ${formatDuration(-left)} ago` : `expires in ${formatDuration(left)}`}</span>
      <span class="muted">{formatTime(cert.notAfter)}</span>
    </span>
  );
}

/** Where the operator asked to place a certificate and was told another answers one of its names. */
interface Clash {
  readonly cert: Certificate;
  readonly planes: readonly Plane[];
  readonly detail: string;
}

function AnswerForm({ cert, onDone }: { cert: Certificate; onDone: () => void }) {
  const [pem, setPem] = useState('');
  const [error, setError] = useState<unknown>(null);
  return (
    <form class="panel inline-form" aria-label={`Answer to ${cert.name}`} onSubmit={(e) => e.preventDefault()}>
      <PemInput label="Signed certificate" value={pem} onInput={setPem} required hint="The authority's answer to this request, with its chain if it gave one." />
      <div class="actions">
        <ActionButton label="Adopt the answer" kind="primary" disabled={pem.trim() === ''} onError={setError} run={async () => {
          await api('POST', `/api/certificates/${cert.id}/answer`, { cert: pem });
          onDone();
        }} />
      </div>
      <ErrorLine error={error} />
    </form>
  );
}

export function CertificateTable(props: { certificates: readonly Certificate[]; fetchedAt: number; refresh: () => Promise<void> }) {
  const [error, setError] = useState<unknown>(null);
  const [clash, setClash] = useState<Clash | null>(null);
  const [answering, setAnswering] = useState<string | null>(null);
  // The planes asked for a certificate while its placement is on its way: the ticks show the
  // operator's choice, held still, until the gateway's answer replaces it.
  const [asking, setAsking] = useState<Readonly<Record<string, readonly Plane[]>>>({});

  const place = async (cert: Certificate, planes: readonly Plane[], replace: boolean) => {
    setClash(null);
    setAsking((a) => ({ ...a, [cert.id]: planes }));
    const settled = () => setAsking((a) => {
      const { [cert.id]: _done, ...rest } = a;
      return rest;
    });
    try {
      await api('PUT', `/api/certificates/${cert.id}/placement`, { planes, replace });
      setError(null);
      // Placed: the ticks stay as asked until the list read again shows them.
      await props.refresh();
      settled();
    } catch (err) {
      // Refused: the ticks return to what the gateway holds in the same moment the sentence shows.
      settled();
      if (err instanceof ApiError && err.code === 'tls.name-taken') setClash({ cert, planes, detail: err.detail });
      else setError(err);
      await props.refresh();
    }
  };

  if (props.certificates.length === 0) {
    return <p class="notice">No certificate is held yet: add one below. Every plane answers on its plain HTTP port only until a certificate is placed on it.</p>;
  }
  return (
    <>
      <div class="table-wrap">
        <table class="tls-certs">
          <thead>
            <tr><th>Certificate</th><th>Names</th><th>State</th><th>Expiry</th><th>Placed on</th><th>Actions</th></tr>
          </thead>
          <tbody>
            {props.certificates.map((c) => {
              const shown = asking[c.id] ?? c.planes;
              return (
                <Fragment key={c.id}>
                  <tr>
                    <td>
                      <strong>{c.name}</strong>
                      <div class="muted">{SOURCE_LABEL[c.source]}{c.issuer ? ` · issued by ${c.issuer}` : ''}</div>
                      {c.paths && <div class="muted"><code>{c.paths.cert}</code></div>}
                    </td>
                    <td class="names">{c.names.join(', ')}</td>
                    <td>
                      <span class={`badge ${STATE_CLASS[c.state]}`}>{c.state}</span>
                      {c.detail && <div class="muted detail">{c.detail}</div>}
                    </td>
                    <td><Countdown cert={c} fetchedAt={props.fetchedAt} /></td>
                    <td>
                      <fieldset class="placement" aria-label={`Placement of ${c.name}`}>
                        {PLANES.map((p) => (
                          <label class="inline">
                            <input
                              type="checkbox"
                              checked={shown.includes(p)}
                              disabled={c.state === 'pending' || asking[c.id] !== undefined}
                              onChange={(e) => {
                                const on = (e.currentTarget as HTMLInputElement).checked;
                                void place(c, PLANES.filter((q) => (q === p ? on : c.planes.includes(q))), false);
                              }}
                            />
                            {PLANE_LABEL[p]}
                            {c.inactive.includes(p) && <span class="badge warn" title="placed, but it does not fit the plane's mode">inactive</span>}
                          </label>
                        ))}
                      </fieldset>
                      {c.planes.length === 0 && c.state !== 'pending' && <span class="muted">unassigned: kept in reserve</span>}
                    </td>
                    <td>
                      <div class="actions">
                        {c.state === 'pending' && (
                          <>
                            <ActionButton label="Download request" ariaLabel={`Download the signing request of ${c.name}`} onError={setError}
                              run={() => download(`/api/certificates/${c.id}/csr`, `${c.name}.csr`)} />
                            <button type="button" aria-expanded={answering === c.id} aria-label={`Adopt the answer to ${c.name}`}
                              onClick={() => setAnswering(answering === c.id ? null : c.id)}>Adopt the answer…</button>
                          </>
                        )}
                        <RemoveButton what={c.name} onError={setError} run={async () => {
                          try {
                            await api('DELETE', `/api/certificates/${c.id}`);
                          } finally {
                            await props.refresh();
                          }
                        }} />
                      </div>
                    </td>
                  </tr>
                  {answering === c.id && c.state === 'pending' && (
                    <tr><td colSpan={6}><AnswerForm cert={c} onDone={() => { setAnswering(null); void props.refresh(); }} /></td></tr>
                  )}
                </Fragment>
              );
            })}
          </tbody>
        </table>
      </div>
      {clash && (
        <div class="panel clash" role="alert">
          <p class="error">{clash.detail}</p>
          <div class="actions">
            <ActionButton label={`Place ${clash.cert.name} in its stead`} kind="primary" onError={setError} run={() => place(clash.cert, clash.planes, true)} />
            <button type="button" onClick={() => setClash(null)}>Keep things as they are</button>
          </div>
        </div>
      )}
      <ErrorLine error={error} />
    </>
  );
}
