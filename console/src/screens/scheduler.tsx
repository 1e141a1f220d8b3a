/**
 * The scheduler screen (spec 1.1 rule 37): every schedule, filtered by organisation, service and
 * metadata, kept current by the live feed; a run in flight as it goes (calling, waiting for the
 * answer, accepted); pause, resume, run now, replay and delete; a schedule's run history; the
 * history retention and the schedules per token (root changes them). The console creates and
 * edits no schedule: backends do, on the internal plane.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { get, getPage } from '../api.ts';
import { ErrorLine, useTick } from '../components/common.tsx';
import { holds } from '../pages.ts';
import { useSession } from '../session.ts';
import { RunHistory } from './scheduler/history.tsx';
import { metaMatcher, metaParams, parseMetaFilter, type MetaCondition } from './scheduler/meta-filter.ts';
import type { Schedule } from './scheduler/model.ts';
import { ScheduleRow } from './scheduler/row.tsx';
import { SchedulerSettings } from './scheduler/settings.tsx';
import { useScheduleFeed } from './scheduler/use-feed.ts';
import './scheduler.css';

const UTC_KEY = 'meerkat.scheduler.utc';
const HIDE_FINISHED_KEY = 'meerkat.scheduler.hideFinished';

/** A switch kept in the browser between visits. */
function useRemembered(key: string): [boolean, (v: boolean) => void] {
  const [value, set] = useState(localStorage.getItem(key) === '1');
  return [value, (v) => {
    localStorage.setItem(key, v ? '1' : '0');
    set(v);
  }];
}

/** The list's address for these filters (docs/schedules.md "Filters"); `limit=1`: a check, not a read. */
function listPath(organisation: string | null, routeId: string | null, conditions: readonly MetaCondition[]): string {
  const q = new URLSearchParams();
  if (organisation) q.set('tenant', organisation);
  if (routeId) q.set('route', routeId);
  metaParams(conditions, q);
  q.set('limit', '1');
  return `/api/schedules?${q}`;
}

const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

export function SchedulerScreen() {
  const session = useSession();
  const [organisation, setOrganisation] = useState<string | null>(session.organisation);
  const [routeId, setRouteId] = useState<string | null>(null);
  const [metaText, setMetaText] = useState('');
  const [conditions, setConditions] = useState<MetaCondition[]>([]);
  const [metaError, setMetaError] = useState<unknown>(null);
  const [access, setAccess] = useState<'checking' | 'ok' | { error: unknown }>('checking');
  const [utc, setUtc] = useRemembered(UTC_KEY);
  const [hideFinished, setHideFinished] = useRemembered(HIDE_FINISHED_KEY);
  const [historyOf, setHistoryOf] = useState<string | null>(null);
  const [knownRoutes, setKnownRoutes] = useState<string[]>([]);

  // The shell's organisation switch moves this screen's filter too.
  useEffect(() => setOrganisation(session.organisation), [session.organisation]);

  // A first read tells whether the account may see schedules: the feed's refusal has no sentence.
  useEffect(() => {
    getPage<Schedule>('/api/schedules?limit=1').then(() => setAccess('ok'), (error) => setAccess({ error }));
  }, []);

  useEffect(() => {
    // The routes' own list is infra-admin's; an app-admin chooses among the routes schedules name.
    if (!holds(session.account.capabilities, 'infra-admin')) return;
    get<{ routes: Array<{ id: string }> }>('/api/routes').then((r) => setKnownRoutes(r.routes.map((x) => x.id)), () => undefined);
  }, [session.account]);

  const feed = useScheduleFeed({ organisation, routeId }, access === 'ok');
  const nowMs = useTick(1000) + feed.offsetMs;

  const applyMeta = async (ev: Event) => {
    ev.preventDefault();
    const parsed = parseMetaFilter(metaText);
    if ('error' in parsed) {
      setMetaError(new Error(parsed.error));
      return;
    }
    try {
      // The gateway judges the expressions: its refusal (filter.regex-invalid) is the one shown.
      await getPage<Schedule>(listPath(organisation, routeId, parsed.conditions));
      setConditions(parsed.conditions);
      setMetaError(null);
    } catch (err) {
      setMetaError(err);
    }
  };

  const matches = useMemo(() => metaMatcher(conditions), [conditions]);
  const all = feed.schedules ?? [];
  const matching = all.filter((s) => matches(s.metadata));
  const shown = hideFinished ? matching.filter((s) => !(s.finished && s.at)) : matching;
  const hidden = matching.length - shown.length;

  const orgName = (id: string | null) => (id === null ? '—' : session.organisations.find((o) => o.id === id)?.name ?? id);
  const orgChoices = [...new Set([...session.organisations.map((o) => o.id), ...feed.organisations, ...(organisation ? [organisation] : [])])].sort();
  const routeChoices = [...new Set([...knownRoutes, ...feed.routes, ...(routeId ? [routeId] : [])])].sort();
  const selected = historyOf === null ? undefined : all.find((s) => s.id === historyOf);

  if (access === 'checking') return <section><h1>Scheduler</h1><p class="muted" role="status">Loading…</p></section>;
  if (access !== 'ok') return <section><h1>Scheduler</h1><ErrorLine error={access.error} /></section>;

  return (
    <section class="scheduler">
      <h1>Scheduler</h1>
      <p class="muted sched-intro">
        Backends create and change schedules on the internal plane with a schedules token; here they can be paused, resumed, run now, replayed and deleted.
      </p>
      <div class="filters" role="group" aria-label="Filters">
        <label>
          Organisation
          <select value={organisation ?? ''} onChange={(e) => setOrganisation((e.currentTarget as HTMLSelectElement).value || null)}>
            <option value="">All</option>
            {orgChoices.map((id) => <option value={id}>{orgName(id)}</option>)}
          </select>
        </label>
        <label>
          Service (route)
          <select value={routeId ?? ''} onChange={(e) => setRouteId((e.currentTarget as HTMLSelectElement).value || null)}>
            <option value="">All</option>
            {routeChoices.map((id) => <option value={id}>{id}</option>)}
          </select>
        </label>
        <form class="sched-meta-form" onSubmit={(e) => void applyMeta(e)}>
          <label>
            Metadata
            <input
              type="text"
              value={metaText}
              placeholder="team=billing env=~^prod-"
              aria-describedby="sched-meta-help"
              spellcheck={false}
              autocomplete="off"
              onInput={(e) => setMetaText((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <button type="submit">Filter</button>
        </form>
        <label class="inline">
          <input type="checkbox" checked={hideFinished} onChange={(e) => setHideFinished((e.currentTarget as HTMLInputElement).checked)} />
          Hide finished delayed actions
        </label>
        <label class="inline">
          <input type="checkbox" checked={utc} onChange={(e) => setUtc((e.currentTarget as HTMLInputElement).checked)} />
          Hours in UTC
        </label>
      </div>
      <p id="sched-meta-help" class="muted sched-help">
        Metadata: key=value matches exactly, key=~expression by regular expression; several conditions, separated by spaces, must all hold.
        {' '}Hours are shown in {utc ? 'UTC' : `${ZONE} (this browser's zone)`}.
      </p>
      <ErrorLine error={metaError} />
      <p class="muted sched-status" role="status">
        {feed.state === 'open' ? `Live${feed.node ? ` from ${feed.node}` : ''}.` : feed.state === 'retrying' ? 'The live feed dropped; reconnecting…' : feed.state === 'connecting' ? 'Connecting to the live feed…' : ''}
        {feed.schedules !== null && ` ${shown.length} schedule${shown.length === 1 ? '' : 's'} shown${hidden > 0 ? `, ${hidden} finished delayed action${hidden === 1 ? '' : 's'} hidden` : ''}.`}
      </p>
      {feed.state === 'closed' && <ErrorLine error={new Error(feed.reason ?? 'The live feed closed.')} />}
      {feed.schedules !== null && shown.length === 0 && (
        <p class="notice">{all.length === 0 && conditions.length === 0 && !organisation && !routeId
          ? 'No schedule yet: backends create them on the internal plane with a schedules token.'
          : 'No schedule matches these filters.'}</p>
      )}
      {shown.length > 0 && (
        <div class="table-wrap">
          <table class="sched-table" aria-label="Schedules">
            <thead>
              <tr>
                <th>Schedule</th><th>Service</th><th>Organisation</th><th>Cadence</th><th>State</th><th>Next turn</th><th>Last outcome</th><th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((s) => (
                <ScheduleRow
                  key={s.id}
                  schedule={s}
                  label={s.name ?? s.id}
                  organisation={orgName(s.organisation)}
                  utc={utc}
                  nowMs={nowMs}
                  historyOpen={historyOf === s.id}
                  onHistory={() => setHistoryOf(historyOf === s.id ? null : s.id)}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {selected && <RunHistory schedule={selected} label={selected.name ?? selected.id} utc={utc} onClose={() => setHistoryOf(null)} />}
      <SchedulerSettings utc={utc} />
    </section>
  );
}
