/**
 * Access (CONTRACT.md "Core resources"): accounts, roles, tokens and routes, one tab each. Every
 * tab can be opened; one the account may not read shows the API's refusal, which names the
 * capability it needs. The open tab is part of the address (?tab=tokens).
 */
import { useRef, useState } from 'preact/hooks';
import { navigate } from '../router.ts';
import { holds, type Capability } from '../pages.ts';
import { useSession } from '../session.ts';
import { AccountsPanel } from './access/accounts.tsx';
import { RolesPanel } from './access/roles.tsx';
import { TokensPanel } from './access/tokens.tsx';
import { RoutesPanel } from './access/routes.tsx';
import './access.css';

const PATH = '/access';

const TABS = [
  { id: 'accounts', name: 'Accounts', needs: 'app-admin', Panel: AccountsPanel },
  { id: 'roles', name: 'Roles', needs: 'app-admin', Panel: RolesPanel },
  { id: 'tokens', name: 'Tokens', needs: 'root', Panel: TokensPanel },
  { id: 'routes', name: 'Routes', needs: 'infra-admin', Panel: RoutesPanel },
] as const satisfies ReadonlyArray<{ id: string; name: string; needs: Capability; Panel: () => unknown }>;

type TabId = (typeof TABS)[number]['id'];

export function AccessScreen() {
  const { account } = useSession();
  const [tab, setTab] = useState<TabId>(() => {
    const asked = new URLSearchParams(location.search).get('tab');
    const named = TABS.find((t) => t.id === asked);
    // Without a tab in the address, the first one this account may read.
    return (named ?? TABS.find((t) => holds(account.capabilities, t.needs)) ?? TABS[0]).id;
  });
  const buttons = useRef<Record<string, HTMLButtonElement | null>>({});

  const choose = (id: TabId, focus = false) => {
    setTab(id);
    navigate(`${PATH}?tab=${id}`, true);
    if (focus) buttons.current[id]?.focus();
  };

  // The tab list's keys (WAI-ARIA tabs): arrows move along, Home and End to either end.
  const onKey = (ev: KeyboardEvent) => {
    const i = TABS.findIndex((t) => t.id === tab);
    const to = ev.key === 'ArrowRight' ? (i + 1) % TABS.length : ev.key === 'ArrowLeft' ? (i - 1 + TABS.length) % TABS.length
      : ev.key === 'Home' ? 0 : ev.key === 'End' ? TABS.length - 1 : -1;
    if (to < 0) return;
    ev.preventDefault();
    choose(TABS[to]!.id, true);
  };

  const current = TABS.find((t) => t.id === tab) ?? TABS[0];
  return (
    <section class="access">
      <h1>Access</h1>
      <div class="tabs" role="tablist" aria-label="Access sections" onKeyDown={onKey}>
        {TABS.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            id={`access-tab-${t.id}`}
            aria-selected={t.id === tab}
            aria-controls={`access-panel-${t.id}`}
            tabIndex={t.id === tab ? 0 : -1}
            ref={(el) => { buttons.current[t.id] = el; }}
            onClick={() => choose(t.id)}
          >
            {t.name}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`access-panel-${current.id}`} aria-labelledby={`access-tab-${current.id}`} class="tab-panel">
        <h2>{current.name}</h2>
        <current.Panel key={current.id} />
      </div>
    </section>
  );
}
