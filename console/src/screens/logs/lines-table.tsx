/** The shown lines, newest first: time, level, message, attributes, node. */
import { memo } from 'preact/compat';
import { lineTime, type HeldLine, type LogLine } from './model.ts';

const LEVEL_BADGE: Record<LogLine['level'], string> = { debug: 'badge', info: 'badge ok', warn: 'badge warn', error: 'badge bad' };

function Attrs({ attrs }: { attrs: LogLine['attrs'] }) {
  const entries = Object.entries(attrs);
  if (entries.length === 0) return null;
  return (
    <ul class="logs-attrs">
      {entries.map(([k, v]) => <li><span class="muted">{k}=</span>{typeof v === 'string' ? v : JSON.stringify(v)}</li>)}
    </ul>
  );
}

// A row never changes once made: memo keeps a new line from re-rendering the thousands before it.
const Row = memo(function Row({ held }: { held: HeldLine }) {
  const l = held.line;
  return (
    <tr>
      <td class="logs-time"><time dateTime={l.time}>{lineTime(l.time)}</time></td>
      <td><span class={LEVEL_BADGE[l.level] ?? 'badge'}>{l.level}</span></td>
      <td class="logs-message">{l.message}</td>
      <td><Attrs attrs={l.attrs} /></td>
      <td class="logs-node">{l.node}</td>
    </tr>
  );
});

export function LinesTable({ lines }: { lines: readonly HeldLine[] }) {
  const newestFirst = [...lines].reverse();
  return (
    <div class="table-wrap">
      <table aria-label="Log lines">
        <thead><tr><th scope="col">Time</th><th scope="col">Level</th><th scope="col">Message</th><th scope="col">Attributes</th><th scope="col">Node</th></tr></thead>
        <tbody>{newestFirst.map((h) => <Row key={h.key} held={h} />)}</tbody>
      </table>
    </div>
  );
}
