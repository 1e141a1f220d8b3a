/**
 * The Logs screen (spec 1.4 rules 3-5; CONTRACT.md "Logs", "Live feeds"): this node's last 5,000
 * operational lines, live, filtered by level and text in the browser, and the shown lines exported
 * as JSON Lines; the level every node follows, with its countdown; the access log switch and the
 * output mode. Root or infra-admin: anyone else reads the API's refusal.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, get, saveBlob } from '../api.ts';
import { openLive, type LiveState } from '../live.ts';
import { ErrorLine } from '../components/common.tsx';
import { LevelControl } from './logs/level-control.tsx';
import { OutputSettings } from './logs/output-settings.tsx';
import { LinesTable } from './logs/lines-table.tsx';
import {
  HELD_LINES, jsonLines, LEVELS, shows, textOf,
  type FeedMessage, type HeldLine, type LevelState, type LineFilter, type LogLevel, type LogLine, type LogSettings,
} from './logs/model.ts';
import './logs/logs.css';

/** How long new lines gather before the table is drawn again: a burst is one render, not hundreds. */
const FLUSH_MS = 100;

const FEED_TEXT: Record<LiveState, string> = { connecting: 'Connecting…', open: 'Live', retrying: 'Connection lost; reconnecting…', closed: 'Closed' };

export function LogsScreen() {
  const [refused, setRefused] = useState<unknown>(null);
  const [settings, setSettings] = useState<LogSettings | null>(null);
  const [level, setLevel] = useState<LevelState | null>(null);
  const [skewMs, setSkewMs] = useState<number | null>(null);
  const [lines, setLines] = useState<HeldLine[]>([]);
  const [node, setNode] = useState('');
  const [feed, setFeed] = useState<{ state: LiveState; reason?: string }>({ state: 'connecting' });
  const [filter, setFilter] = useState<LineFilter>({ level: '', q: '' });
  const nextKey = useRef(0);

  useEffect(() => {
    let live: { close(): void } | undefined;
    let pending: HeldLine[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    let gone = false;
    const hold = (line: LogLine): HeldLine => ({ key: nextKey.current++, line, text: textOf(line) });
    const flush = () => {
      timer = undefined;
      const add = pending;
      pending = [];
      setLines((held) => {
        const all = held.concat(add);
        return all.length > HELD_LINES ? all.slice(all.length - HELD_LINES) : all;
      });
    };
    const onMessage = (m: FeedMessage) => {
      if (m.type === 'hello') {
        // After any reconnect hello is the truth (docs/live.md): it replaces what the screen held.
        pending = [];
        clearTimeout(timer);
        timer = undefined;
        setLines(m.lines.map(hold));
        setNode(m.node);
        setSkewMs(m.at * 1000 - Date.now());
        setLevel({ level: m.level, startupLevel: m.startupLevel, revertsAt: m.revertsAt });
      } else if (m.type === 'line') {
        pending.push(hold(m.line));
        timer ??= setTimeout(flush, FLUSH_MS);
      } else if (m.type === 'level') {
        setLevel({ level: m.level, startupLevel: m.startupLevel, revertsAt: m.revertsAt });
      }
    };
    // The settings first: a caller who may not read the logs gets the API's sentence, and no feed
    // is opened only to be refused.
    get<LogSettings>('/api/settings/logs').then((s) => {
      if (gone) return;
      setSettings(s);
      setLevel((l) => l ?? s);
      live = openLive<FeedMessage>('/api/logs/live', onMessage, (state, reason) => setFeed({ state, ...(reason ? { reason } : {}) }));
    }, (err) => {
      if (!gone) setRefused(err);
    });
    return () => {
      gone = true;
      clearTimeout(timer);
      live?.close();
    };
  }, []);

  const shown = useMemo(() => lines.filter((h) => shows(h, filter)), [lines, filter]);

  const put = async (change: Partial<{ level: LogLevel; accessLog: boolean; mode: string }>) => {
    const s = await api<LogSettings>('PUT', '/api/settings/logs', change);
    setSettings(s);
    setLevel({ level: s.level, startupLevel: s.startupLevel, revertsAt: s.revertsAt });
  };

  const exportShown = () => {
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    saveBlob(new Blob([jsonLines(shown)], { type: 'application/jsonl' }), `meerkat-logs-${node || 'node'}-${stamp}.jsonl`);
  };

  if (refused) {
    return <section><h1>Logs</h1><ErrorLine error={refused} /></section>;
  }

  return (
    <section aria-busy={settings === null}>
      <h1>Logs</h1>
      {level && <LevelControl state={level} skewMs={skewMs} set={(l) => put({ level: l })} />}
      <div class="logs-feed">
        <span role="status" aria-label="Live feed">
          <span class={`badge ${feed.state === 'open' ? 'ok' : feed.state === 'closed' ? 'bad' : 'warn'}`}>{FEED_TEXT[feed.state]}</span>
          {node && <> node <strong>{node}</strong>, its last {HELD_LINES.toLocaleString('en')} operational lines</>}
        </span>
      </div>
      {feed.state === 'closed' && feed.reason && <ErrorLine error={new ApiError(0, 'closed', feed.reason)} />}
      <form class="filters" role="search" aria-label="Filters of the lines" onSubmit={(e) => e.preventDefault()}>
        <label>
          Show level
          <select value={filter.level} onChange={(e) => setFilter({ ...filter, level: e.currentTarget.value as LineFilter['level'] })}>
            <option value="">Every level</option>
            {LEVELS.map((l) => <option value={l}>{l === 'error' ? 'error only' : `${l} and above`}</option>)}
          </select>
        </label>
        <label>
          Search
          <input type="search" value={filter.q} maxLength={200} onInput={(e) => setFilter({ ...filter, q: e.currentTarget.value })} />
        </label>
        <button type="button" disabled={shown.length === 0} onClick={exportShown}>Export shown lines (.jsonl)</button>
        <span class="muted" role="status" aria-label="Lines shown">{shown.length} of {lines.length} lines shown</span>
      </form>
      <LinesTable lines={shown} />
      {settings && <OutputSettings settings={settings} put={put} />}
    </section>
  );
}
