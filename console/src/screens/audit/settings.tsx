/**
 * How long the trail keeps its lines (spec 1.3 rule 15), the collector push (licensed edition),
 * what the hourly sweep last removed and what a full queue dropped since start. The API answers
 * all of it to root alone, so the screen mounts this panel for root only; the gateway judges
 * every value and its refusal is the sentence shown.
 */
import { useEffect, useId, useState } from 'preact/hooks';
import { api, get } from '../../api.ts';
import { ErrorLine, formatTime, LastChange, useFormSubmit } from '../../components/common.tsx';
import { Field } from '../../components/field.tsx';

type Retention = 'P3M' | 'P6M' | 'P1Y' | 'P2Y' | 'P5Y';
type Push = { readonly audit: boolean; readonly console: boolean };

/** `GET /api/settings/audit` (src/planes/control/audit-api.ts). */
export interface AuditSettings {
  readonly retention: Retention;
  readonly operationRetention: string;
  readonly push: Push;
  /** `at` in epoch seconds; `removed` counts lines per part of the trail. */
  readonly lastSweep: { readonly at: number; readonly removed: Readonly<Record<string, number>> } | null;
  readonly dropped: { readonly audit: number; readonly console: number };
  readonly updatedAt: number | null;
  readonly updatedBy: string | null;
}

const RETENTIONS: ReadonlyArray<[Retention, string]> = [
  ['P3M', 'Three months'],
  ['P6M', 'Six months'],
  ['P1Y', 'One year (default)'],
  ['P2Y', 'Two years'],
  ['P5Y', 'Five years'],
];

const PARTS: ReadonlyArray<[string, string]> = [['changes', 'changes'], ['security', 'security'], ['operations', 'operations']];

function sweepText(sweep: NonNullable<AuditSettings['lastSweep']>): string {
  const total = Object.values(sweep.removed).reduce((a, b) => a + b, 0);
  const parts = PARTS.map(([key, name]) => `${name} ${sweep.removed[key] ?? 0}`).join(', ');
  return `${formatTime(sweep.at)}: ${total} line${total === 1 ? '' : 's'} removed (${parts})`;
}

function SettingsForm({ held, onSaved }: { held: AuditSettings; onSaved: (s: AuditSettings) => void }) {
  const [retention, setRetention] = useState<Retention>(held.retention);
  const [operations, setOperations] = useState(held.operationRetention);
  const [push, setPush] = useState<Push>(held.push);
  // After a save the controls show what the gateway stored; a refusal leaves what was typed, to be corrected.
  useEffect(() => {
    setRetention(held.retention);
    setOperations(held.operationRetention);
    setPush(held.push);
  }, [held]);

  // Only what moved is sent: the fields left out keep the value another root may have set meanwhile.
  const change: { retention?: Retention; operationRetention?: string; push?: Partial<Push> } = {};
  if (retention !== held.retention) change.retention = retention;
  if (operations.trim() !== held.operationRetention) change.operationRetention = operations.trim();
  if (push.audit !== held.push.audit || push.console !== held.push.console) change.push = push;
  const unchanged = Object.keys(change).length === 0;

  const { busy, error, submit } = useFormSubmit(async () => {
    onSaved(await api<AuditSettings>('PUT', '/api/settings/audit', change));
  });
  return (
    <form class="settings-form" noValidate onSubmit={(e) => void submit(e)}>
      <div class="filters">
        <Field label="Retention of changes and security lines" hint="A shorter retention removes the older lines at the next hourly sweep.">
          <select value={retention} onChange={(e) => setRetention(e.currentTarget.value as Retention)}>
            {RETENTIONS.map(([value, text]) => <option value={value}>{text}</option>)}
          </select>
        </Field>
        <Field label="Retention of audited operations" hint="ISO 8601, from seven days to a year: P7D to P365D, P1W to P52W, P1M to P12M, or P1Y. A month (P1M) by default.">
          <input type="text" value={operations} spellcheck={false} autocomplete="off" placeholder="P1M"
            onInput={(e) => setOperations(e.currentTarget.value)} />
        </Field>
      </div>
      <fieldset class="settings-push">
        <legend>Push to the collector (licensed edition, GATEWAY_OTLP_ENDPOINT)</legend>
        <label class="inline">
          <input type="checkbox" checked={push.audit} onChange={(e) => setPush({ ...push, audit: e.currentTarget.checked })} />
          The data plane's lines (sign-ins, refusals, password and factor changes, audited operations)
        </label>
        <label class="inline">
          <input type="checkbox" checked={push.console} onChange={(e) => setPush({ ...push, console: e.currentTarget.checked })} />
          The console's lines too (changes and console sign-ins)
        </label>
      </fieldset>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || unchanged}>Save</button>
      </div>
      <ErrorLine error={error} />
    </form>
  );
}

export function AuditSettingsPanel() {
  const headingId = useId();
  const [held, setHeld] = useState<AuditSettings | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    get<AuditSettings>('/api/settings/audit').then(setHeld, setError);
  }, []);

  return (
    <section class="panel settings-panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Settings</h2>
      {held === null ? error === null && <p class="muted" role="status">Loading…</p> : (
        <>
          <SettingsForm held={held} onSaved={setHeld} />
          <dl class="settings-values" aria-label="Sweep and drops">
            <div><dt>Last sweep</dt><dd>{held.lastSweep === null ? 'No sweep yet' : sweepText(held.lastSweep)}</dd></div>
            <div><dt>Data plane lines dropped since start (full queue)</dt><dd>{held.dropped.audit}</dd></div>
            <div><dt>Console lines dropped since start (full queue)</dt><dd>{held.dropped.console}</dd></div>
          </dl>
          <LastChange updatedAt={held.updatedAt} updatedBy={held.updatedBy} />
        </>
      )}
      <ErrorLine error={error} />
    </section>
  );
}
