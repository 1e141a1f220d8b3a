/** Small pieces every screen uses: the refusal line, the time format, the busy button. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api.ts';

/** An error as the operator reads it: the API's own sentence. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.detail;
  return err instanceof Error ? err.message : String(err);
}

export function ErrorLine({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return <p class="error" role="alert">{messageOf(error)}</p>;
}

export function Notice({ children }: { children: ComponentChildren }) {
  return <p class="notice" role="status">{children}</p>;
}

/** Runs an action, disabling the button while it runs and reporting a refusal through `onError`. */
export function ActionButton(props: { label: string; run: () => Promise<unknown>; onError: (err: unknown) => void; disabled?: boolean; kind?: 'danger' | 'primary'; ariaLabel?: string }) {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      class={props.kind ?? ''}
      aria-label={props.ariaLabel}
      disabled={busy || props.disabled}
      onClick={async () => {
        setBusy(true);
        try {
          await props.run();
          props.onError(null);
        } catch (err) {
          props.onError(err);
        } finally {
          setBusy(false);
        }
      }}
    >
      {props.label}
    </button>
  );
}

/**
 * A form's submit: the default action stopped, `busy` while `run` works, and the refusal it
 * throws kept in `error` (cleared once a submit succeeds).
 */
export function useFormSubmit(run: () => Promise<void>): { busy: boolean; error: unknown; submit: (ev: Event) => Promise<void> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (ev: Event) => {
    ev.preventDefault();
    setBusy(true);
    try {
      await run();
      setError(null);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, submit };
}

/** The time of an epoch (seconds) in the operator's zone or in UTC. */
export function formatTime(epochSeconds: number | null | undefined, utc = false): string {
  if (epochSeconds === null || epochSeconds === undefined) return '—';
  const d = new Date(epochSeconds * 1000);
  if (utc) return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  return d.toLocaleString(undefined, { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** Who last changed a setting and when, as the settings answers of the API say it. */
export function LastChange({ updatedAt, updatedBy, utc = false }: { updatedAt: number | null; updatedBy: string | null; utc?: boolean }) {
  return (
    <p class="muted" role="status">
      {updatedAt === null
        ? 'Nobody has changed these settings: the defaults hold.'
        : `Last changed by ${updatedBy ?? 'an unknown caller'} on ${formatTime(updatedAt, utc)}.`}
    </p>
  );
}

/** Re-renders every `ms` (countdowns). */
export function useTick(ms = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

/** "2 d 3 h", "14 min 5 s": a duration in the two largest units. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const parts: Array<[number, string]> = [[Math.floor(s / 86400), 'd'], [Math.floor(s / 3600) % 24, 'h'], [Math.floor(s / 60) % 60, 'min'], [s % 60, 's']];
  const first = parts.findIndex(([n]) => n > 0);
  if (first < 0) return '0 s';
  return parts.slice(first, first + 2).filter(([n]) => n > 0).map(([n, u]) => `${n} ${u}`).join(' ');
}
