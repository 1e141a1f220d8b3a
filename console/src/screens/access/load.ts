/** A list the Access screen reads from the API, asked again after each change the screen makes. */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { get } from '../../api.ts';

export interface Loaded<T> {
  readonly data: T | null;
  /** The API's refusal (a 403 names the capability the section needs). */
  readonly error: unknown;
  reload(): void;
}

export function useLoad<T>(path: string): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let gone = false;
    get<T>(path).then(
      (d) => { if (!gone) { setData(d); setError(null); } },
      (err: unknown) => { if (!gone) setError(err); },
    );
    return () => { gone = true; };
  }, [path, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { data, error, reload };
}

/** "a, b c" → ["a", "b", "c"]: the lists the forms take (roles, routes). */
export function splitList(text: string): string[] {
  return text.split(/[\s,]+/).map((s) => s.trim()).filter((s) => s !== '');
}

/** A list as a cell reads it. */
export function joined(items: readonly string[] | null | undefined, none = '—'): string {
  return items && items.length > 0 ? items.join(', ') : none;
}

export interface AccountRow {
  readonly id: string;
  readonly name: string;
  readonly roles: readonly string[];
  readonly capabilities: readonly string[];
  readonly organisation: string | null;
  readonly disabled: boolean;
}
