/**
 * Keeps every HTTP answer this process receives through undici's global dispatcher: status line,
 * headers (Set-Cookie included) and body, in the order they ended. The gateway's own calls use
 * pools of their own, so what is kept is exactly what the test's requests got back, whichever
 * helper made them (`call`, `signIn`, `adminWith`…).
 */
import { Agent, DecoratorHandler, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';

export interface RecordedAnswer {
  /** 1-based, in the order the answers ended. */
  readonly seq: number;
  readonly method: string;
  /** Origin and path as asked. */
  readonly url: string;
  readonly status: number;
  readonly statusText: string;
  readonly headers: Readonly<Record<string, string | string[]>>;
  readonly body: string;
}

export interface AnswerRecorder {
  readonly answers: readonly RecordedAnswer[];
  /** The last answer that ended (throws when none). */
  last(): RecordedAnswer;
  /** Puts the previous global dispatcher back. */
  stop(): Promise<void>;
}

/** The forwarding half of an undici handler: what DecoratorHandler does at run time, typed. */
type Forward = Required<Pick<Dispatcher.DispatchHandler, 'onRequestStart' | 'onRequestUpgrade' | 'onResponseStart' | 'onResponseData' | 'onResponseEnd' | 'onResponseError'>>;

export function recordAnswers(): AnswerRecorder {
  const answers: RecordedAnswer[] = [];
  const previous = getGlobalDispatcher();
  const agent = new Agent();
  const recording: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
    // DecoratorHandler adapts the legacy handler `request()` passes to the controller-style calls.
    const inner = new DecoratorHandler(handler) as unknown as Forward;
    let status = 0;
    let statusText = '';
    let headers: Record<string, string | string[]> = {};
    const chunks: Buffer[] = [];
    const url = `${String(opts.origin ?? '')}${opts.path}`;
    const keep = () => answers.push({
      seq: answers.length + 1, method: opts.method, url, status, statusText, headers, body: Buffer.concat(chunks).toString('utf8'),
    });
    const mine: Dispatcher.DispatchHandler = {
      onRequestStart: (c, context) => inner.onRequestStart(c, context),
      onRequestUpgrade: (c, code, h, socket) => inner.onRequestUpgrade(c, code, h, socket),
      onResponseStart: (c, code, h: IncomingHttpHeaders, message) => {
        status = code;
        statusText = message ?? '';
        headers = Object.fromEntries(Object.entries(h).filter((e): e is [string, string | string[]] => e[1] !== undefined));
        return inner.onResponseStart(c, code, h, message);
      },
      onResponseData: (c, chunk) => {
        chunks.push(Buffer.from(chunk));
        return inner.onResponseData(c, chunk);
      },
      onResponseEnd: (c, trailers) => {
        keep();
        return inner.onResponseEnd(c, trailers);
      },
      onResponseError: (c, err) => {
        // A body cut short is still what the caller saw.
        if (status !== 0) keep();
        return inner.onResponseError(c, err);
      },
    };
    return dispatch(opts, mine);
  };
  setGlobalDispatcher(agent.compose(recording));
  return {
    answers,
    last() {
      const a = answers.at(-1);
      if (a === undefined) throw new Error('no answer recorded');
      return a;
    },
    async stop() {
      setGlobalDispatcher(previous);
      await agent.close();
    },
  };
}

/** The answer as one text: status line, header lines, blank line, body. */
export function answerText(a: RecordedAnswer, without: readonly string[] = []): string {
  const lines = [`HTTP/1.1 ${a.status} ${a.statusText}`];
  for (const [name, value] of Object.entries(a.headers)) {
    if (without.includes(name)) continue;
    for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${v}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n${a.body}`;
}
