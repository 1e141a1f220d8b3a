/** The console's addresses: the history API, one current path, links that do not reload. */
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();

export function navigate(path: string, replace = false): void {
  if (path === location.pathname + location.search) return;
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  for (const fn of listeners) fn();
}

addEventListener('popstate', () => {
  for (const fn of listeners) fn();
});

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const fn = () => setPath(location.pathname);
    listeners.add(fn);
    return () => void listeners.delete(fn);
  }, []);
  return path;
}

/** A click on an in-console link moves without a reload (a modified click opens a tab as usual). */
export function onLinkClick(ev: MouseEvent): void {
  const a = (ev.currentTarget as HTMLAnchorElement | null);
  if (!a || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  ev.preventDefault();
  navigate(a.getAttribute('href') ?? '/');
}
