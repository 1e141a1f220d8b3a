/** Force HTTPS on the data plane and the HSTS duration (spec 1.2 rules 11-12). */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ActionButton, ErrorLine, formatDuration } from '../../components/common.tsx';
import { Field } from '../../components/field.tsx';
import type { TlsSettings } from './types.ts';

const TWO_YEARS = 63_072_000;

export function RedirectPanel({ settings, refresh }: { settings: TlsSettings; refresh: () => Promise<void> }) {
  const held = settings.redirect;
  const [force, setForce] = useState(held.forceHttps);
  const [maxAge, setMaxAge] = useState(String(held.hstsMaxAge));
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setForce(held.forceHttps);
    setMaxAge(String(held.hstsMaxAge));
  }, [held.forceHttps, held.hstsMaxAge]);
  const seconds = Number(maxAge);
  return (
    <form class="panel" aria-label="Redirect and HSTS" onSubmit={(e) => e.preventDefault()}>
      <div class="filters">
        <label class="inline">
          <input type="checkbox" checked={force} onChange={(e) => setForce((e.currentTarget as HTMLInputElement).checked)} />
          Force HTTPS on the application plane (308)
        </label>
        <Field label="HSTS max-age (seconds)" hint={`${Number.isFinite(seconds) && seconds >= 0 ? formatDuration(seconds * 1000) : '—'}; one day by default, two years at most.`}>
          <input type="number" min={0} max={TWO_YEARS} value={maxAge} onInput={(e) => setMaxAge((e.currentTarget as HTMLInputElement).value)} />
        </Field>
      </div>
      <p class="muted">
        The redirect spares the two health probes and any name no certificate placed on the application carries.
        Strict-Transport-Security follows it, only for HTTPS on port 443 with plain HTTP on 80, never to localhost or an IP address and never with includeSubDomains; elsewhere, and once Force HTTPS is off, answers carry max-age=0.
      </p>
      <div class="actions">
        <ActionButton label="Save the redirect" kind="primary" onError={setError} run={async () => {
          try {
            await api('PUT', '/api/settings/tls/redirect', { forceHttps: force, hstsMaxAge: Math.trunc(seconds) });
          } finally {
            await refresh();
          }
        }} />
      </div>
      <ErrorLine error={error} />
    </form>
  );
}
