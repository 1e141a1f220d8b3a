/**
 * Who serves each plane's public names (spec 1.2 rules 13-18): the gateway itself or a proxy in
 * front, the names declared, the proxies believed, the internal names a served certificate covers
 * and the declared names none covers.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ActionButton, ErrorLine } from '../../components/common.tsx';
import { Field } from '../../components/field.tsx';
import { PLANE_LABEL, splitNames, type Door, type TlsSettings } from './types.ts';

function InternalNames({ door }: { door: Door }) {
  if (door.internalNames.length === 0) return null;
  return (
    <div>
      <span class="muted">Internal names (the names services call the plane by):</span>
      <ul class="ticks">
        {door.internalNames.map((n) => (
          <li>
            <input type="checkbox" checked={n.covered} disabled aria-label={`${n.name} covered by a served certificate`} />
            {' '}<code>{n.name}</code>{n.covered ? '' : <span class="muted"> — no served certificate covers it</span>}
          </li>
        ))}
      </ul>
    </div>
  );
}

function DoorForm({ plane, door, refresh }: { plane: 'console' | 'app'; door: Door; refresh: () => Promise<void> }) {
  const [proxied, setProxied] = useState(door.proxied);
  const [names, setNames] = useState(door.names.join('\n'));
  const [proxies, setProxies] = useState(door.proxyAddresses.join(' '));
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  // What the gateway holds wins over an edit left unsaved once it changes (another operator, another node).
  const held = JSON.stringify([door.proxied, door.names, door.proxyAddresses]);
  useEffect(() => {
    setProxied(door.proxied);
    setNames(door.names.join('\n'));
    setProxies(door.proxyAddresses.join(' '));
  }, [held]);
  return (
    <fieldset class="panel door">
      <legend>{PLANE_LABEL[plane]} door</legend>
      <div class="filters">
        <Field label="HTTPS served by">
          <select value={proxied ? 'proxy' : 'gateway'} onChange={(e) => { setProxied((e.currentTarget as HTMLSelectElement).value === 'proxy'); setSaved(false); }}>
            <option value="gateway">The gateway itself</option>
            <option value="proxy">A proxy in front</option>
          </select>
        </Field>
        <Field grow label="Public names" hint={`One full host name each: no scheme, port, path, IP address or wildcard.${plane === 'app' ? ' The first one makes the issuer (iss) of every signed identity: the https address of that name.' : ''}`}>
          <textarea rows={2} value={names} placeholder={plane === 'console' ? 'console.example.com' : 'app.example.com'} onInput={(e) => { setNames((e.currentTarget as HTMLTextAreaElement).value); setSaved(false); }} />
        </Field>
        <Field grow label="Proxy addresses" hint="CIDR ranges or addresses whose X-Forwarded-For and X-Forwarded-Proto are believed; empty: loopback and private ranges.">
          <input value={proxies} disabled={!proxied} placeholder="10.0.0.0/8 192.168.1.10" onInput={(e) => { setProxies((e.currentTarget as HTMLInputElement).value); setSaved(false); }} />
        </Field>
      </div>
      {door.uncovered.length > 0 && (
        <p><span class="badge warn">Uncovered</span> No placed certificate carries {door.uncovered.map((n, i) => <>{i > 0 && ', '}<code>{n}</code></>)}.</p>
      )}
      <InternalNames door={door} />
      <div class="actions">
        <ActionButton label="Save" ariaLabel={`Save the ${PLANE_LABEL[plane]} door`} kind="primary" onError={setError} run={async () => {
          setSaved(false);
          try {
            await api('PUT', `/api/settings/tls/doors/${plane}`, { proxied, names: splitNames(names), proxyAddresses: proxied ? splitNames(proxies) : door.proxyAddresses });
            setSaved(true);
          } finally {
            await refresh();
          }
        }} />
        {saved && <span class="muted" role="status">Saved.</span>}
      </div>
      <ErrorLine error={error} />
    </fieldset>
  );
}

export function DoorsPanel({ settings, refresh }: { settings: TlsSettings; refresh: () => Promise<void> }) {
  const internal = settings.doors.internal;
  return (
    <>
      <DoorForm plane="console" door={settings.doors.console} refresh={refresh} />
      <DoorForm plane="app" door={settings.doors.app} refresh={refresh} />
      <section class="panel door" aria-label="Internal door">
        <h3>Internal door</h3>
        {internal.runtimeNames.length === 0
          ? <p class="muted">The runtime does not say which names the services call the internal plane by (GATEWAY_INTERNAL_NAMES is not set).</p>
          : <InternalNames door={internal} />}
        <p class="muted">The internal plane is never put behind an ingress; its certificate must carry a name the services call it by, and ACME is not offered there.</p>
      </section>
    </>
  );
}
