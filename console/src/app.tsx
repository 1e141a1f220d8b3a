/** The console's shell: sign-in, then the navigation of the screens the account may open. */
import type { ComponentType } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, get, whenSignedOut } from './api.ts';
import { allowed, PAGES, type PageDef } from './pages.ts';
import { navigate, onLinkClick, usePath } from './router.ts';
import { SessionContext, type Account, type Organisation, type SessionValue } from './session.ts';
import { SignIn } from './screens/signin.tsx';
import { SchedulerScreen } from './screens/scheduler.tsx';
import { TlsScreen } from './screens/tls.tsx';
import { AuditScreen } from './screens/audit.tsx';
import { LogsScreen } from './screens/logs.tsx';
import { MetricsScreen } from './screens/metrics.tsx';
import { AccessScreen } from './screens/access.tsx';

const SCREENS: Record<string, ComponentType> = {
  '/scheduler': SchedulerScreen,
  '/tls': TlsScreen,
  '/audit': AuditScreen,
  '/logs': LogsScreen,
  '/data-plane/metrics': MetricsScreen,
  '/access': AccessScreen,
};

const ORGANISATION_KEY = 'meerkat.organisation';

function pageOf(path: string): PageDef | undefined {
  return PAGES.find((p) => path === p.path || path.startsWith(`${p.path}/`));
}

export function App() {
  const path = usePath();
  const [account, setAccount] = useState<Account | null | undefined>(undefined);
  const [organisations, setOrganisations] = useState<Organisation[]>([]);
  const [organisation, setOrganisationState] = useState<string | null>(localStorage.getItem(ORGANISATION_KEY));

  useEffect(() => {
    whenSignedOut(() => setAccount(null));
    get<{ account: Account }>('/api/session').then((s) => setAccount(s.account), () => setAccount(null));
  }, []);

  useEffect(() => {
    if (!account) return;
    // The organisations the switch offers: all of them for whoever may list them, else the account's own.
    get<{ organisations: Organisation[] }>('/api/organisations').then(
      (r) => setOrganisations(r.organisations),
      () => setOrganisations(account.organisation ? [{ id: account.organisation, name: account.organisation }] : []),
    );
  }, [account]);

  const session = useMemo<SessionValue | null>(() => account ? {
    account,
    organisation,
    organisations,
    setOrganisation: (id) => {
      if (id) localStorage.setItem(ORGANISATION_KEY, id);
      else localStorage.removeItem(ORGANISATION_KEY);
      setOrganisationState(id);
    },
    signOut: async () => {
      try {
        await api('DELETE', '/api/session');
      } finally {
        setAccount(null);
        navigate('/');
      }
    },
  } : null, [account, organisation, organisations]);

  if (account === undefined) return <main class="loading" aria-busy="true"><p>Loading…</p></main>;
  if (account === null || session === null) {
    return <SignIn onSignedIn={(a) => {
      setAccount(a);
      // Back to the screen asked for, else the first one the account may open.
      const asked = pageOf(location.pathname);
      const first = PAGES.find((p) => allowed(p, a.capabilities));
      if (!asked) navigate(first?.path ?? '/', true);
    }} />;
  }

  const page = pageOf(path);
  const visible = PAGES.filter((p) => allowed(p, account.capabilities));
  if (!page) {
    const first = visible[0];
    if (first) queueMicrotask(() => navigate(first.path, true));
  }
  const Screen = page ? SCREENS[page.path] : undefined;
  return (
    <SessionContext.Provider value={session}>
      <header class="top">
        <a class="brand" href="/" onClick={onLinkClick}>Meerkat</a>
        <nav aria-label="Screens">
          {visible.map((p) => (
            <a href={p.path} onClick={onLinkClick} aria-current={page?.path === p.path ? 'page' : undefined}>{p.name}</a>
          ))}
        </nav>
        <div class="who">
          {organisations.length > 0 && (
            <label>
              Organisation
              <select value={organisation ?? ''} onChange={(e) => session.setOrganisation((e.currentTarget as HTMLSelectElement).value || null)}>
                <option value="">All</option>
                {organisations.map((o) => <option value={o.id}>{o.name}</option>)}
              </select>
            </label>
          )}
          <span class="account" aria-label="Signed in as">{account.name}</span>
          <button type="button" onClick={() => void session.signOut()}>Sign out</button>
        </div>
      </header>
      <main>
        {Screen ? <Screen key={page!.path} /> : visible.length === 0 ? (
          <section><h1>Console</h1><p>This account holds no capability that opens a screen of the console.</p></section>
        ) : null}
      </main>
    </SessionContext.Provider>
  );
}
