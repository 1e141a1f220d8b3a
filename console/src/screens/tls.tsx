/**
 * The TLS screen (spec 1.2, 2.5, 3.2; CONTRACT.md "TLS"): certificates and their placement, the
 * plain ports and the console's traffic, the doors, the redirect, the trusted and ACME authorities,
 * and the local machine assistant. Everything is read again every few seconds, since the console
 * traffic window moves and other operators or nodes change things too.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get } from '../api.ts';
import { ErrorLine } from '../components/common.tsx';
import { AcmePanel } from './tls/acme.tsx';
import { LocalAssistant } from './tls/assistant.tsx';
import { AuthoritiesPanel } from './tls/authorities.tsx';
import { CertificateTable } from './tls/certificates.tsx';
import { DoorsPanel } from './tls/doors.tsx';
import { ObtainCertificate } from './tls/obtain.tsx';
import { PortsPanel } from './tls/ports.tsx';
import { RedirectPanel } from './tls/redirect.tsx';
import type { Acme, AcmeAuthority, Certificate, TlsSettings, TrustedAuthority } from './tls/types.ts';
import './tls/tls.css';

const REFRESH_MS = 5000;

interface Loaded {
  readonly certificates: readonly Certificate[];
  /** performance.now() when the certificates were answered: the countdowns run from there. */
  readonly fetchedAt: number;
  readonly settings: TlsSettings;
  readonly authorities: readonly TrustedAuthority[];
  readonly acme: Acme | null;
}

async function loadAcme(): Promise<Acme | null> {
  try {
    return { authorities: (await get<{ authorities: AcmeAuthority[] }>('/api/acme/authorities')).authorities };
  } catch (err) {
    // The community edition's refusal is the answer to show; anything else leaves ACME out of this read.
    if (err instanceof ApiError && err.status === 403) return { refused: err.detail };
    return null;
  }
}

async function loadAll(): Promise<Loaded> {
  const [certs, settings, authorities, acme] = await Promise.all([
    get<{ certificates: Certificate[] }>('/api/certificates'),
    get<TlsSettings>('/api/settings/tls'),
    get<{ authorities: TrustedAuthority[] }>('/api/trusted-authorities'),
    loadAcme(),
  ]);
  return {
    certificates: [...certs.certificates].sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name)),
    fetchedAt: performance.now(),
    settings,
    authorities: authorities.authorities,
    acme,
  };
}

export function TlsScreen() {
  const [data, setData] = useState<Loaded | null>(null);
  const [error, setError] = useState<unknown>(null);
  // Reads overlap (the timer, a change's own refresh): only the latest one asked is shown.
  const asked = useRef(0);
  // Refused (403: the account lacks the capability): asking again every few seconds changes nothing.
  const refused = useRef(false);

  const refresh = useCallback(async () => {
    const n = ++asked.current;
    try {
      const loaded = await loadAll();
      if (n !== asked.current) return;
      setData(loaded);
      setError(null);
    } catch (err) {
      if (err instanceof ApiError && err.status === 403) refused.current = true;
      if (n === asked.current) setError(err);
    }
  }, []);

  useEffect(() => {
    void refresh();
    const timer = setInterval(() => {
      if (!document.hidden && !refused.current) void refresh();
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [refresh]);

  return (
    <section class="tls">
      <h1>TLS</h1>
      <ErrorLine error={error} />
      {data === null ? (error === null && <p class="muted" aria-busy="true">Loading…</p>) : (
        <>
          <h2 id="tls-certificates">Certificates</h2>
          <CertificateTable certificates={data.certificates} fetchedAt={data.fetchedAt} refresh={refresh} />
          <h2>Add a certificate</h2>
          <ObtainCertificate acme={data.acme} refresh={refresh} />
          <h2>Plain ports and HTTPS doors</h2>
          <PortsPanel settings={data.settings} refresh={refresh} />
          <h2>Public names and proxies</h2>
          <DoorsPanel settings={data.settings} refresh={refresh} />
          <h2>Redirect and HSTS</h2>
          <RedirectPanel settings={data.settings} refresh={refresh} />
          <h2>Trusted authorities</h2>
          <AuthoritiesPanel authorities={data.authorities} refresh={refresh} />
          {data.acme && (
            <>
              <h2>ACME authorities</h2>
              <AcmePanel acme={data.acme} refresh={refresh} />
            </>
          )}
          <h2>Local machine assistant</h2>
          <LocalAssistant settings={data.settings} />
        </>
      )}
    </section>
  );
}
