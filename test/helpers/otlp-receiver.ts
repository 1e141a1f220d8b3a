/**
 * A real OTLP/HTTP logs collector for tests: node:http on 127.0.0.1, port 0, `POST /v1/logs`.
 * OTLPLogExporter of @opentelemetry/exporter-logs-otlp-http posts OTLP JSON (the protobuf
 * encoding belongs to the -proto exporter), so the body is parsed as JSON and its AnyValues are
 * turned back into plain values. Every request is counted; every log record accepted is kept.
 *
 * Modes: `ok` accepts; `refuse` reads the request and answers `refuseStatus` (503 by default);
 * `hang` reads the request and never answers; `down` closes the listener and every connection, so
 * new connections are refused; any other mode listens again on the same port.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';

export type ReceiverMode = 'ok' | 'refuse' | 'hang' | 'down';

export interface ReceivedLog {
  readonly body: unknown;
  readonly attributes: Record<string, unknown>;
  readonly resource: Record<string, unknown>;
  readonly scope: string;
  /** Hex, or null when the record carries no trace context. */
  readonly traceId: string | null;
  readonly spanId: string | null;
  readonly flags: number | null;
  /** Nanoseconds since the epoch, as the decimal string OTLP JSON uses. */
  readonly timeUnixNano: string;
  readonly observedTimeUnixNano: string;
  readonly severityNumber: number | null;
  readonly severityText: string | null;
}

export interface ReceivedRequest {
  readonly mode: ReceiverMode;
  /** The status answered, or 0 when left hanging. */
  readonly status: number;
  readonly records: number;
}

export interface OtlpReceiver {
  readonly port: number;
  /** http://127.0.0.1:<port>, the base an exporter adds /v1/logs to. */
  readonly url: string;
  readonly mode: ReceiverMode;
  /** Status answered in `refuse` mode. */
  refuseStatus: number;
  readonly logs: ReceivedLog[];
  readonly requests: ReceivedRequest[];
  /** Requests that were not a well-formed OTLP JSON logs export (should stay empty). */
  readonly problems: string[];
  setMode(mode: ReceiverMode): Promise<void>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  let mode: ReceiverMode = 'ok';
  const logs: ReceivedLog[] = [];
  const requests: ReceivedRequest[] = [];
  const problems: string[] = [];
  const hanging = new Set<ServerResponse>();

  const answer = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('end', () => {
      const seen = mode;
      if (req.method !== 'POST' || req.url !== '/v1/logs') {
        problems.push(`${req.method} ${req.url}`);
        answer(res, 404, '{}');
        return;
      }
      if (seen === 'hang') {
        requests.push({ mode: seen, status: 0, records: 0 });
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      if (seen !== 'ok') {
        requests.push({ mode: seen, status: receiver.refuseStatus, records: 0 });
        answer(res, receiver.refuseStatus, '{"message":"refused by the test collector"}');
        return;
      }
      let decoded: ReceivedLog[];
      try {
        decoded = decode(req, Buffer.concat(chunks));
      } catch (err) {
        problems.push(`undecodable export: ${(err as Error).message}`);
        answer(res, 400, '{}');
        return;
      }
      logs.push(...decoded);
      requests.push({ mode: seen, status: 200, records: decoded.length });
      answer(res, 200, '{}');
    });
  });
  server.keepAliveTimeout = 60_000;

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const shut = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
    });

  await listen(0);
  const port = (server.address() as AddressInfo).port;

  const receiver: OtlpReceiver = {
    port,
    url: `http://127.0.0.1:${port}`,
    get mode() {
      return mode;
    },
    refuseStatus: 503,
    logs,
    requests,
    problems,
    async setMode(next) {
      if (next === mode) return;
      if (next === 'down') {
        mode = next;
        await shut();
        return;
      }
      if (mode === 'down') await listen(port);
      mode = next;
    },
    close: shut,
  };
  return receiver;
}

function decode(req: IncomingMessage, raw: Buffer): ReceivedLog[] {
  const type = String(req.headers['content-type'] ?? '');
  if (!type.startsWith('application/json')) throw new Error(`content-type ${type}`);
  const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
  const doc = JSON.parse(text) as { resourceLogs?: unknown };
  if (!Array.isArray(doc.resourceLogs)) throw new Error('no resourceLogs');
  const out: ReceivedLog[] = [];
  for (const rl of doc.resourceLogs as Array<{ resource?: { attributes?: unknown }; scopeLogs?: unknown }>) {
    const resource = keyValues(rl.resource?.attributes);
    for (const sl of (rl.scopeLogs ?? []) as Array<{ scope?: { name?: string }; logRecords?: unknown }>) {
      for (const r of (sl.logRecords ?? []) as Array<Record<string, unknown>>) {
        out.push({
          body: anyValue(r.body),
          attributes: keyValues(r.attributes),
          resource,
          scope: sl.scope?.name ?? '',
          traceId: typeof r.traceId === 'string' && r.traceId !== '' ? r.traceId : null,
          spanId: typeof r.spanId === 'string' && r.spanId !== '' ? r.spanId : null,
          flags: typeof r.flags === 'number' ? r.flags : null,
          timeUnixNano: String(r.timeUnixNano ?? ''),
          observedTimeUnixNano: String(r.observedTimeUnixNano ?? ''),
          severityNumber: typeof r.severityNumber === 'number' ? r.severityNumber : null,
          severityText: typeof r.severityText === 'string' ? r.severityText : null,
        });
      }
    }
  }
  return out;
}

function keyValues(list: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of (Array.isArray(list) ? list : []) as Array<{ key?: string; value?: unknown }>) {
    // defineProperty: a key named __proto__ stays a key.
    if (typeof kv.key === 'string') Object.defineProperty(out, kv.key, { value: anyValue(kv.value), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** OTLP JSON AnyValue to a plain value: 64-bit integers may come as strings. */
function anyValue(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return undefined;
  const a = v as Record<string, unknown>;
  if ('stringValue' in a) return a.stringValue;
  if ('boolValue' in a) return a.boolValue;
  if ('intValue' in a) return Number(a.intValue);
  if ('doubleValue' in a) return Number(a.doubleValue);
  if ('bytesValue' in a) return Buffer.from(String(a.bytesValue), 'base64');
  if ('arrayValue' in a) return ((a.arrayValue as { values?: unknown[] }).values ?? []).map(anyValue);
  if ('kvlistValue' in a) return keyValues((a.kvlistValue as { values?: unknown }).values);
  return undefined;
}
