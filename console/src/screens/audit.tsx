/**
 * The Audit screen (spec 1.3 rules 2, 5, 8, 10, 14, 16; CONTRACT.md "Audit"): the trail newest
 * first within the caller's perimeter, filtered by organisation (the header's switch), part, period, free text and target kind, paged
 * with More, each line's changes opened on demand, and the selection exported as CSV (licensed
 * edition); for root, the trail's retention and its last sweep. The API decides who reads what: a
 * caller with no audit capability reads its refusal.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, download, get } from '../api.ts';
import { holds } from '../pages.ts';
import { useSession } from '../session.ts';
import { ActionButton, ErrorLine, Notice } from '../components/common.tsx';
import { AuditFilterBar } from './audit/filters.tsx';
import { AuditSettingsPanel } from './audit/settings.tsx';
import { EVENT_COLUMNS, EventRow } from './audit/event-row.tsx';
import { filterQuery, NO_FILTERS, PAGE_SIZE, type AuditEvent, type AuditFilters, type AuditPage } from './audit/model.ts';
import './audit/audit.css';

export function AuditScreen() {
  // The header's organisation switch narrows the trail to that organisation's events.
  const { account, organisation } = useSession();
  const [filters, setFilters] = useState<AuditFilters>(NO_FILTERS);
  const [events, setEvents] = useState<AuditEvent[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [refused, setRefused] = useState<ApiError | null>(null);
  const [exportError, setExportError] = useState<unknown>(null);
  // Answers to filters the operator has since changed are dropped, whatever order they arrive in.
  const asked = useRef(0);

  const load = async (f: AuditFilters, cursor: string | null) => {
    const ticket = ++asked.current;
    setLoading(true);
    try {
      const page = await get<AuditPage>(`/api/audit${filterQuery(f, { organisation, limit: PAGE_SIZE, cursor })}`);
      if (ticket !== asked.current) return;
      setEvents((shown) => (cursor === null ? page.events : [...shown, ...page.events]));
      setNext(page.next);
      setError(null);
    } catch (err) {
      if (ticket !== asked.current) return;
      if (err instanceof ApiError && err.status === 403 && err.code === 'capability') setRefused(err);
      else setError(err);
    } finally {
      if (ticket === asked.current) setLoading(false);
    }
  };

  useEffect(() => {
    void load(filters, null);
  }, [filters, organisation]);

  if (refused) {
    return <section><h1>Audit</h1><ErrorLine error={refused} /></section>;
  }

  return (
    <section aria-busy={loading}>
      <h1>Audit</h1>
      <AuditFilterBar value={filters} onChange={setFilters} signins={holds(account.capabilities, 'root')} />
      <div class="actions audit-export">
        <ActionButton label="Export CSV" onError={setExportError}
          run={() => download(`/api/audit/export${filterQuery(filters, { organisation })}`, 'audit.csv')} />
        <span class="muted">the lines these filters select, every page (licensed edition)</span>
      </div>
      <ErrorLine error={exportError} />
      <ErrorLine error={error} />
      <div class="table-wrap">
        <table aria-label="Audit events">
          <thead><tr>{EVENT_COLUMNS.map((c) => <th scope="col">{c}</th>)}</tr></thead>
          <tbody>{events.map((e) => <EventRow key={e.id} event={e} />)}</tbody>
        </table>
      </div>
      {!loading && events.length === 0 && !error && <Notice>No event matches these filters.</Notice>}
      <div class="actions audit-more">
        <span class="muted" role="status">{events.length} {events.length === 1 ? 'event' : 'events'} shown{next ? ', more remain' : ''}</span>
        {next && <button type="button" disabled={loading} onClick={() => void load(filters, next)}>More</button>}
      </div>
      {/* GET /api/settings/audit answers root alone: another reader would only meet a refusal. */}
      {holds(account.capabilities, 'root') && <AuditSettingsPanel />}
    </section>
  );
}
