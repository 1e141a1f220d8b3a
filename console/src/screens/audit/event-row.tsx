/** One line of the trail, and under it, when opened, the fields it moved (from, to). */
import { useState } from 'preact/hooks';
import { formatTime } from '../../components/common.tsx';
import { actorText, valueText, type AuditEvent } from './model.ts';

const PART_NAMES: Record<AuditEvent['part'], string> = { changes: 'Changes', security: 'Security', operations: 'Operations' };

/** Columns of the table, so the opened changes span them all. */
export const EVENT_COLUMNS = ['When', 'Part', 'Action', 'Actor', 'Target', 'Organisation', 'Address', 'Detail', 'Changes'] as const;

function Value({ v }: { v: unknown }) {
  const text = valueText(v);
  return text === null ? <span class="muted">not set</span> : <code>{text}</code>;
}

function Target({ target }: { target: AuditEvent['target'] }) {
  return (
    <>
      <span class="badge">{target.kind}</span>{' '}
      {target.name ?? target.id ?? ''}
      {target.id && target.name && target.id !== target.name && <span class="muted"> ({target.id})</span>}
    </>
  );
}

export function EventRow({ event }: { event: AuditEvent }) {
  const [open, setOpen] = useState(false);
  const changes = event.changes ?? [];
  const actor = actorText(event.actor);
  return (
    <>
      <tr>
        <td class="audit-when"><time dateTime={new Date(event.when * 1000).toISOString()}>{formatTime(event.when)}</time></td>
        <td>{PART_NAMES[event.part] ?? event.part}</td>
        <td><code>{event.action}</code></td>
        <td>{actor || <span class="muted">nobody known</span>}</td>
        <td><Target target={event.target} /></td>
        <td>{event.organisation ?? ''}</td>
        <td>{event.address ?? ''}</td>
        <td class="audit-detail">{event.detail ?? ''}</td>
        <td>
          {changes.length > 0 && (
            <button type="button" class="audit-toggle" aria-expanded={open} onClick={() => setOpen(!open)}
              aria-label={`${open ? 'Hide' : 'Show'} the ${changes.length} ${changes.length === 1 ? 'change' : 'changes'} of ${event.action} at ${formatTime(event.when)}`}>
              {open ? 'Hide' : 'Show'} {changes.length}
            </button>
          )}
        </td>
      </tr>
      {open && (
        <tr class="audit-changes">
          <td colSpan={EVENT_COLUMNS.length}>
            <div class="audit-changes-box">
              <table aria-label={`Changes of ${event.action}`}>
                <thead><tr><th scope="col">Field</th><th scope="col">From</th><th scope="col">To</th></tr></thead>
                <tbody>
                  {changes.map((c) => (
                    <tr key={c.field}><td><code>{c.field}</code></td><td><Value v={c.from} /></td><td><Value v={c.to} /></td></tr>
                  ))}
                </tbody>
              </table>
            </div>
          </td>
        </tr>
      )}
    </>
  );
}
