/**
 * The local machine assistant (spec 1.2 rule 26): how to reach this gateway over HTTPS from one's
 * own machine without a browser warning: a hosts-file entry, a locally trusted authority made with
 * mkcert, one certificate for every name, imported here and placed on the console and the
 * application. Static steps, filled with this gateway's names and ports.
 */
import { useState } from 'preact/hooks';
import { Field } from '../../components/field.tsx';
import { httpsUrl, portOf, type TlsSettings } from './types.ts';

type Os = 'linux' | 'macos' | 'windows';
const OS_LABEL: Record<Os, string> = { linux: 'Linux', macos: 'macOS', windows: 'Windows' };

function guessOs(): Os {
  const ua = navigator.userAgent;
  if (/Windows/i.test(ua)) return 'windows';
  if (/Mac OS X|Macintosh/i.test(ua)) return 'macos';
  return 'linux';
}

/** Default HTTPS ports, used while a door is closed and the gateway has not bound it yet. */
const DEFAULT_PORT = { console: 9443, app: 8443 } as const;

function Command({ children }: { children: string }) {
  return <pre><code>{children}</code></pre>;
}

export function LocalAssistant({ settings }: { settings: TlsSettings }) {
  const [os, setOs] = useState<Os>(guessOs());
  const declared = settings.doors.console.names.length > 0 || settings.doors.app.names.length > 0;
  const consoleNames = settings.doors.console.names.length ? settings.doors.console.names : ['console.meerkat.test'];
  const appNames = settings.doors.app.names.length ? settings.doors.app.names : ['app.meerkat.test'];
  const names = [...consoleNames, ...appNames];
  const port = (plane: 'console' | 'app') => settings.doors[plane].https.publicPort ?? portOf(settings.doors[plane].https.address) ?? DEFAULT_PORT[plane];
  const hostsLine = `127.0.0.1 ${names.join(' ')}`;
  const mkcert = `mkcert -cert-file meerkat-local.pem -key-file meerkat-local-key.pem ${names.join(' ')} localhost 127.0.0.1`;
  const caroot = { linux: '~/.local/share/mkcert', macos: '~/Library/Application Support/mkcert', windows: '%LOCALAPPDATA%\\mkcert' }[os];
  const urlOf = (name: string, p: number) => httpsUrl(name, p);

  return (
    <div class="panel assistant">
      <div class="filters">
        <Field label="Operating system">
          <select value={os} onChange={(e) => setOs((e.currentTarget as HTMLSelectElement).value as Os)}>
            {(Object.keys(OS_LABEL) as Os[]).map((o) => <option value={o}>{OS_LABEL[o]}</option>)}
          </select>
        </Field>
      </div>
      {!declared && <p class="muted">No public name is declared on the doors above yet: the steps use {names.join(' and ')}; declare your own and the steps follow.</p>}
      <ol class="steps" aria-label={`Steps on ${OS_LABEL[os]}`}>
        <li>
          <strong>Hosts-file entry.</strong> Make the names point to this machine.
          {os === 'windows' ? (
            <>
              {' '}In PowerShell opened as Administrator:
              <Command>{`Add-Content -Path "$env:SystemRoot\\System32\\drivers\\etc\\hosts" -Value "${hostsLine}"`}</Command>
            </>
          ) : (
            <>
              {' '}In a terminal:
              <Command>{`echo '${hostsLine}' | sudo tee -a /etc/hosts`}</Command>
              {os === 'macos' && <>Then clear the name cache:<Command>{'sudo dscacheutil -flushcache; sudo killall -HUP mDNSResponder'}</Command></>}
            </>
          )}
        </li>
        <li>
          <strong>A locally trusted authority</strong>, made with mkcert, a local tool that also makes the system and the browsers trust it.
          <Command>{{
            linux: 'sudo apt install mkcert libnss3-tools    # Debian, Ubuntu; elsewhere your distribution\'s package\nmkcert -install',
            macos: 'brew install mkcert nss    # nss: for Firefox\nmkcert -install',
            windows: 'choco install mkcert    # or: scoop bucket add extras; scoop install mkcert\nmkcert -install',
          }[os]}</Command>
        </li>
        <li>
          <strong>One certificate for all the names</strong>, console and application together:
          <Command>{mkcert}</Command>
        </li>
        <li>
          <strong>Import it here.</strong> Under “Add a certificate”, choose “Import a certificate and its key”: <code>meerkat-local.pem</code> as the certificate, <code>meerkat-local-key.pem</code> as the private key. Then, on its row, tick <strong>Console</strong> and <strong>Application</strong>: the one certificate serves both.
        </li>
        <li>
          <strong>Open</strong> <code>{urlOf(consoleNames[0]!, port('console'))}</code> for the console and <code>{urlOf(appNames[0]!, port('app'))}</code> for the application, once a certificate is placed on each (the ports are those the world reaches, as the table above says).
        </li>
      </ol>
      <p class="notice" role="note">
        The local authority's private key (<code>rootCA-key.pem</code>, in <code>{caroot}</code>, which <code>mkcert -CAROOT</code> prints) is never shared: it stays on this machine. Never import it here, never add it as a trusted authority, never send it to anyone: whoever holds it can impersonate any site to this machine. Only <code>meerkat-local.pem</code> and its own key go to the gateway.
      </p>
    </div>
  );
}
