/**
 * A live feed of the control plane (docs/live.md) read message by message, as a console would:
 * `next` waits for the first message after the last one taken that passes `pred`, within a bound,
 * and says what arrived instead when none does.
 */
import WebSocket from 'ws';

export type Message = Record<string, any>;

export interface LiveFeed {
  readonly messages: readonly Message[];
  /** The next message (after the last one returned) that satisfies `pred`; fails after WAIT_MS or on the close. */
  next(pred: (m: Message) => boolean, what: string): Promise<Message>;
  /** Resolves with the close code and reason, whoever closed (a refused upgrade closes too). */
  readonly closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

const WAIT_MS = 10_000;

/** Opens `path` on `control` (http://…) with `headers`; `next` waits for what it sends. */
export function openLive(control: string, path: string, headers: Record<string, string>): LiveFeed {
  const ws = new WebSocket(`${control.replace(/^http/, 'ws')}${path}`, { headers });
  const messages: Message[] = [];
  let cursor = 0;
  let wake: (() => void) | undefined;
  let closedInfo: string | undefined;
  ws.on('message', (data) => {
    messages.push(JSON.parse(String(data)) as Message);
    wake?.();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => {
    closedInfo = `${code} ${String(reason)}`;
    resolve({ code, reason: String(reason) });
    wake?.();
  }));
  // A refused upgrade is an error event, then the close: `next` reports it with the close.
  ws.on('error', () => undefined);
  const next = (pred: (m: Message) => boolean, what: string) => new Promise<Message>((resolve, reject) => {
    const timer = setTimeout(() => {
      wake = undefined;
      reject(new Error(`no ${what} within ${WAIT_MS} ms; received ${messages.slice(cursor).map((m) => m.type).join(', ') || 'nothing'}${closedInfo ? `; closed ${closedInfo}` : ''}`));
    }, WAIT_MS);
    const look = () => {
      for (let i = cursor; i < messages.length; i++) {
        if (pred(messages[i]!)) {
          cursor = i + 1;
          clearTimeout(timer);
          wake = undefined;
          resolve(messages[i]!);
          return;
        }
      }
      if (ws.readyState === WebSocket.CLOSED) {
        clearTimeout(timer);
        wake = undefined;
        reject(new Error(`the feed closed (${closedInfo ?? "unknown"}) before ${what}`));
      }
    };
    wake = look;
    look();
  });
  return {
    messages,
    next,
    closed,
    close: async () => {
      if (ws.readyState !== WebSocket.CLOSED) ws.close();
      await closed;
    },
  };
}
