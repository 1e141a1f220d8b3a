/**
 * The scheduler's settings (spec 1.1 rules 21 and 36): how long run history and finished delayed
 * actions are kept, and how many schedules one schedules token may hold. An application
 * administrator reads them; root alone changes them, and the gateway judges every value: its
 * refusal is the sentence shown.
 */
import { useEffect, useId, useState } from 'preact/hooks';
import { api, ApiError, get } from '../../api.ts';
import { ErrorLine, LastChange, useFormSubmit } from '../../components/common.tsx';
import { holds } from '../../pages.ts';
import { useSession } from '../../session.ts';
import { Field } from '../../components/field.tsx';

export interface SchedulesSettings {
  /** ISO 8601 in days, as the gateway stores it: `P30D`. */
  readonly retention: string;
  readonly maxSchedules: number;
  /** Epoch seconds; null while the defaults hold. */
  readonly updatedAt: number | null;
  readonly updatedBy: string | null;
}

type Change = { retention?: string; maxSchedules?: number };

/** `P30D (30 days)`; a form the gateway may one day answer otherwise stays as written. */
function readableRetention(iso: string): string {
  const days = /^P(\d+)D$/.exec(iso)?.[1];
  if (days === undefined) return iso;
  return `${iso} (${days} day${days === '1' ? '' : 's'})`;
}

function ReadOnly({ held }: { held: SchedulesSettings }) {
  return (
    <>
      <dl class="settings-values">
        <div><dt>History retention</dt><dd>{readableRetention(held.retention)}</dd></div>
        <div><dt>Schedules per token</dt><dd>{held.maxSchedules.toLocaleString()}</dd></div>
      </dl>
      <p class="muted">Root alone changes these settings.</p>
    </>
  );
}

function SettingsForm({ held, onSaved }: { held: SchedulesSettings; onSaved: (s: SchedulesSettings) => void }) {
  const [retention, setRetention] = useState(held.retention);
  const [max, setMax] = useState(String(held.maxSchedules));
  // The gateway writes P4W back as P28D: the inputs follow what it stored, not what was typed.
  useEffect(() => {
    setRetention(held.retention);
    setMax(String(held.maxSchedules));
  }, [held]);

  // Only what moved is sent, so a field another root changed meanwhile keeps its new value.
  const change: Change = {};
  if (retention.trim() !== held.retention) change.retention = retention.trim();
  // An empty or malformed number goes as it reads (0, or null for NaN): the gateway's sentence says what it takes.
  if (max.trim() !== String(held.maxSchedules)) change.maxSchedules = Number(max.trim());
  const unchanged = Object.keys(change).length === 0;

  // The form does not validate in the browser (noValidate): the gateway judges, and its sentence is the one shown.
  const { busy, error, submit } = useFormSubmit(async () => {
    onSaved(await api<SchedulesSettings>('PUT', '/api/settings/schedules', change));
  });
  return (
    <form class="settings-form" noValidate onSubmit={(e) => void submit(e)}>
      <div class="filters">
        <Field label="History retention" hint="ISO 8601 days or weeks, from P1D to P1825D (five years). A shorter retention removes the older run history and finished delayed actions at once.">
          <input type="text" value={retention} spellcheck={false} autocomplete="off" placeholder="P30D"
            onInput={(e) => setRetention(e.currentTarget.value)} />
        </Field>
        <Field label="Schedules per token" hint="From 1 to 1,000,000; finished delayed actions do not count. A backend past it is refused.">
          <input type="number" min={1} max={1_000_000} step={1} value={max}
            onInput={(e) => setMax(e.currentTarget.value)} />
        </Field>
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || unchanged}>Save</button>
      </div>
      <ErrorLine error={error} />
    </form>
  );
}

export function SchedulerSettings({ utc }: { utc: boolean }) {
  const { account } = useSession();
  const headingId = useId();
  const [held, setHeld] = useState<SchedulesSettings | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [readable, setReadable] = useState(true);

  useEffect(() => {
    get<SchedulesSettings>('/api/settings/schedules').then(setHeld, (err) => {
      // Whoever lists schedules without reading their settings keeps the screen, without this panel.
      if (err instanceof ApiError && err.status === 403) setReadable(false);
      else setError(err);
    });
  }, []);

  if (!readable) return null;
  return (
    <section class="panel settings-panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Settings</h2>
      {held === null
        ? error === null && <p class="muted" role="status">Loading…</p>
        : (
          <>
            {holds(account.capabilities, 'root') ? <SettingsForm held={held} onSaved={setHeld} /> : <ReadOnly held={held} />}
            <LastChange updatedAt={held.updatedAt} updatedBy={held.updatedBy} utc={utc} />
          </>
        )}
      <ErrorLine error={error} />
    </section>
  );
}
