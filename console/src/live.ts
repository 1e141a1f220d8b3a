/**
 * A live feed of the control plane (docs/live.md): a WebSocket on the same origin, the first
 * message a `hello` snapshot, then one message per event or interval. A feed that drops is
 * opened again after a pause, and its next `hello` replaces what the screen held; a 1008 close
 * (session ended, capability taken away) is final.
 */
export type LiveState = 'connecting' | 'open' | 'retrying' | 'closed';

export interface LiveFeed {
  close(): void;
}

export function openLive<M extends { type: string }>(
  path: string,
  onMessage: (m: M) => void,
  onState: (state: LiveState, reason?: string) => void = () => {},
): LiveFeed {
  let socket: WebSocket | undefined;
  let closed = false;
  let retryMs = 500;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const connect = () => {
    onState('connecting');
    const url = new URL(path, location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(url);
    socket = ws;
    ws.onopen = () => { retryMs = 500; onState('open'); };
    ws.onmessage = (ev) => {
      try {
        onMessage(JSON.parse(String(ev.data)) as M);
      } catch {
        // A frame that is not JSON is not ours to show.
      }
    };
    ws.onclose = (ev) => {
      if (closed) return;
      if (ev.code === 1008) {
        closed = true;
        onState('closed', ev.reason || 'The feed was closed: sign in again.');
        return;
      }
      onState('retrying');
      timer = setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 10_000);
    };
  };
  connect();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      socket?.close();
    },
  };
}
