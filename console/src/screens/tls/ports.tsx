/**
 * The plain ports and the HTTPS doors of each plane (spec 1.2 rules 5-8, 3.2): the switch that
 * keeps a plain port on loopback only, and for the console the callers of the last 30 s on each
 * door, which decide whether the switch or a removal is allowed. A refusal is the API's sentence.
 */
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ActionButton, ErrorLine, formatTime } from '../../components/common.tsx';
import { httpsUrl, PLANE_LABEL, PLANES, portOf, type Plane, type TlsSettings } from './types.ts';

/** The console's HTTPS address as the world reaches it, or the sentence saying why there is none (rule 5). */
function consoleLink(settings: TlsSettings): { href: string } | { none: string } {
  const door = settings.doors.console;
  if (door.https.address === null) return { none: 'The console has no HTTPS door: place a certificate on the console to open one.' };
  // The runtime names the ports it publishes through GATEWAY_PUBLIC_PORTS; once it names some but
  // not the console's HTTPS one, the world cannot reach that door.
  const runtimeSays = PLANES.some((p) => settings.doors[p].https.publicPort !== null || settings.doors[p].http.publicPort !== null);
  if (runtimeSays && door.https.publicPort === null) {
    return { none: `The runtime publishes no HTTPS port for the console, so there is no link to offer; the door listens on ${door.https.address} inside.` };
  }
  return { href: httpsUrl(location.hostname, door.https.publicPort ?? portOf(door.https.address), '/tls') };
}

function TrafficTable({ settings }: { settings: TlsSettings }) {
  return (
    <div class="table-wrap">
      <table aria-label={`Console traffic in the last ${settings.trafficWindow} s`}>
        <thead><tr><th>Console door</th><th>Called from, last {settings.trafficWindow} s</th><th>Latest call</th></tr></thead>
        <tbody>
          {settings.consoleTraffic.map((t) => (
            <tr>
              <th scope="row">{t.door === 'http' ? 'HTTP' : 'HTTPS'}</th>
              <td>{t.peer ?? <span class="muted">Nothing in the last {settings.trafficWindow} s</span>}</td>
              <td>{t.lastSeen === null ? '—' : formatTime(t.lastSeen)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function PortsPanel({ settings, refresh }: { settings: TlsSettings; refresh: () => Promise<void> }) {
  const [error, setError] = useState<unknown>(null);
  const link = consoleLink(settings);
  const onHttps = location.protocol === 'https:';
  const runtimeSilent = PLANES.every((p) => settings.doors[p].https.publicPort === null && settings.doors[p].http.publicPort === null);
  const switchPort = async (plane: Plane, http: boolean) => {
    try {
      await api('PUT', `/api/settings/tls/ports/${plane}`, { http });
    } finally {
      await refresh();
    }
  };
  return (
    <>
      <div class="table-wrap">
        <table>
          <thead><tr><th>Plane</th><th>Plain HTTP port</th><th>HTTPS door</th><th>Switch</th></tr></thead>
          <tbody>
            {PLANES.map((p) => {
              const door = settings.doors[p];
              const off = settings.closed[p].includes('http');
              return (
                <tr>
                  <th scope="row">{PLANE_LABEL[p]}</th>
                  <td>
                    {off ? <span class="badge warn">Off: 127.0.0.1 only</span> : <span class="badge ok">On</span>}
                    <div class="muted">{door.http.address ?? '—'}{door.http.publicPort !== null && ` · reached on port ${door.http.publicPort}`}</div>
                  </td>
                  <td>
                    {door.https.address === null
                      ? <span class="badge">Closed: no certificate placed</span>
                      : <span class="badge ok">Open</span>}
                    {door.https.address !== null && <div class="muted">{door.https.address}{door.https.publicPort !== null && ` · reached on port ${door.https.publicPort}`}</div>}
                  </td>
                  <td>
                    <ActionButton
                      label={off ? 'Switch HTTP on' : 'Switch HTTP off'}
                      ariaLabel={`${off ? 'Switch HTTP on' : 'Switch HTTP off'} for the ${PLANE_LABEL[p]} plane`}
                      onError={setError}
                      run={() => switchPort(p, off)}
                    />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <ErrorLine error={error} />
      <p class="muted">
        Switched off, a plain port listens on 127.0.0.1 only. It goes off only while a certificate serves HTTPS on its plane; the console's also only once nothing came through plain HTTP for {settings.trafficWindow} s (this page's own calls included).
      </p>
      <h3>The console's doors</h3>
      <TrafficTable settings={settings} />
      {onHttps
        ? <p class="notice" role="status">This page is open through the console's HTTPS door.</p>
        : 'href' in link
          ? <p><a href={link.href}>Open the console over HTTPS</a> <span class="muted">({link.href})</span></p>
          : <p class="notice" role="status">{link.none}</p>}
      {runtimeSilent && (
        <p class="muted">The runtime does not say which ports the world reaches (GATEWAY_PUBLIC_PORTS is not set): links use the ports the gateway listens on.</p>
      )}
      <details>
        <summary>Moving a console behind a proxy to HTTPS end to end</summary>
        <ol>
          <li>Place a certificate on the console.</li>
          <li>Point the proxy at the console's HTTPS port.</li>
          <li>Open the console through it.</li>
          <li>Check that HTTP above shows “Nothing in the last {settings.trafficWindow} s”.</li>
          <li>Switch the console's HTTP off.</li>
        </ol>
      </details>
    </>
  );
}
