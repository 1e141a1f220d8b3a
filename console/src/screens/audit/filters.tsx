/** The trail's filters (spec 1.3 rule 14): part, period, free text, target kind. */
import { useState } from 'preact/hooks';
import { PART_LABELS, TARGET_KINDS, type AuditFilters, type PartChoice } from './model.ts';

export function AuditFilterBar(props: { value: AuditFilters; onChange: (f: AuditFilters) => void; signins: boolean }) {
  const f = props.value;
  // The text is sent when asked (Enter or Search), not at each key: each search is a query of the trail.
  const [text, setText] = useState(f.q);
  const set = (patch: Partial<AuditFilters>) => props.onChange({ ...f, ...patch });
  const parts: PartChoice[] = props.signins ? ['all', 'changes', 'signins'] : ['all', 'changes'];
  return (
    <form class="filters" role="search" aria-label="Filters of the trail" onSubmit={(e) => { e.preventDefault(); set({ q: text }); }}>
      <div class="audit-parts" role="group" aria-label="Part">
        {parts.map((p) => (
          <button type="button" aria-pressed={f.part === p} class={f.part === p ? 'primary' : ''} onClick={() => set({ part: p })}>{PART_LABELS[p]}</button>
        ))}
      </div>
      <label>
        From
        <input type="datetime-local" step={1} value={f.from} onChange={(e) => set({ from: e.currentTarget.value })} />
      </label>
      <label>
        To
        <input type="datetime-local" step={1} value={f.to} onChange={(e) => set({ to: e.currentTarget.value })} />
      </label>
      <label>
        Target kind
        <select value={f.part === 'signins' ? 'console' : f.targetKind} disabled={f.part === 'signins'}
          onChange={(e) => set({ targetKind: e.currentTarget.value })}>
          <option value="">Any</option>
          {TARGET_KINDS.map((k) => <option value={k}>{k}</option>)}
        </select>
      </label>
      <label>
        Text (reason, note, address)
        <input type="search" value={text} maxLength={200} onInput={(e) => setText(e.currentTarget.value)} />
      </label>
      <button type="submit">Search</button>
    </form>
  );
}
