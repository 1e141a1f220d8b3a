/**
 * The Logs tab of the console (spec 1.4 rules 3-5; CONTRACT.md "Logs"): the settings every node
 * follows (`/api/settings/logs`), this node's buffer of its last 5,000 operational lines
 * (`/api/logs`), their export as JSON Lines, and the live feed (`logs-live.ts`). Root or
 * infra-admin. The access log is never in the buffer.
 */
import { GatewayError, invalidField } from '../../http/errors.ts';
import type { Router } from '../../http/router.ts';
import type { LineQuery } from '../../log/console-buffer.ts';
import { BUFFER_LINES } from '../../log/console-buffer.ts';
import { LOG_LEVELS, LOG_MODES, parseLogSettings } from '../../core/logs/log-settings.ts';
import type { LogLevel } from '../../settings/settings.ts';
import type { GatewayContext } from '../context.ts';
import { requireLicensed } from '../edition.ts';
import { callerOf, principalLabel, type Principal } from '../principal.ts';
import { requireCapability } from './auth.ts';
import { seconds, WRITE_REFUSALS } from './resource-docs.ts';

export const LOGS_CAPABILITY = 'infra-admin';
const TAGS = ['logs'];

const SETTINGS = {
  type: 'object',
  required: ['level', 'startupLevel', 'revertsAt', 'accessLog', 'mode', 'nodeMode', 'dropped', 'droppedRecords', 'node'],
  properties: {
    level: { type: 'string', enum: LOG_LEVELS, description: 'the operational level in force on this node' },
    startupLevel: { type: 'string', enum: LOG_LEVELS, description: 'GATEWAY_LOG_LEVEL of this node: a restart returns to it' },
    revertsAt: { type: ['integer', 'null'], description: 'epoch seconds when a level more talkative than the startup one returns to it (30 minutes after it was set); null otherwise' },
    accessLog: { type: 'boolean', description: 'one access line per request on standard output, on every node; off by default' },
    mode: { type: 'string', enum: LOG_MODES, description: 'the mode set for every node: startup (GATEWAY_LOG_FORMAT), agent (one OpenTelemetry-shaped object per line) or otlp (pushed to GATEWAY_OTLP_ENDPOINT; licensed edition)' },
    nodeMode: { type: 'string', enum: LOG_MODES, description: 'the mode this node writes in now: mode, except startup on a node asked to push that cannot (the community edition, or no GATEWAY_OTLP_ENDPOINT), as after a restart into another edition' },
    dropped: { type: 'integer', description: 'collector batches dropped after three refusals since this node started' },
    droppedRecords: { type: 'object', description: 'records this node lost since it started, per log (app, access): dropped batches, a full queue, an output that stalled or closed', required: ['app', 'access'], properties: { app: { type: 'integer' }, access: { type: 'integer' } } },
    node: { type: 'string' },
  },
} as const;

const LINE = {
  type: 'object',
  required: ['time', 'level', 'message', 'attrs', 'node'],
  properties: {
    time: { type: 'string', description: 'ISO 8601' }, level: { type: 'string', enum: LOG_LEVELS }, message: { type: 'string' },
    attrs: { type: 'object', additionalProperties: true, description: 'the line\'s own attributes: each message has its own' }, node: { type: 'string' },
  },
} as const;

const QUERY_DOC = 'Query: level (debug, info, warn, error: that level and above), q (text looked for, case-insensitive, in the message and the attributes), limit (the newest lines, at most 5,000).';
const LINE_SCHEMAS = {
  level: { type: 'string', enum: LOG_LEVELS },
  q: { type: 'string', minLength: 1, maxLength: 200 },
  limit: { type: 'integer', minimum: 1, maximum: BUFFER_LINES },
} as const;
const LINE_QUERY = {
  level: 'debug, info, warn or error: lines of that level and above',
  q: 'text looked for, without regard to case, in the message and the attributes (1 to 200 characters)',
  limit: 'the newest lines, 1 to 5,000',
} as const;

/** Reads `level`, `q` and `limit`; unknown or repeated parameters are refused, not ignored. */
export function lineQuery(params: URLSearchParams, allowLimit = true): LineQuery {
  const out: { level?: LogLevel; q?: string; limit?: number } = {};
  const seen = new Set<string>();
  for (const [key, value] of params) {
    if (seen.has(key)) throw invalidField(key, `${key} may be given once.`);
    seen.add(key);
    if (key === 'level') {
      if (!(LOG_LEVELS as readonly string[]).includes(value)) throw invalidField('level', `level is one of ${LOG_LEVELS.join(', ')}.`);
      out.level = value as LogLevel;
    } else if (key === 'q') {
      if (value.length > 200) throw invalidField('q', 'q is at most 200 characters.');
      out.q = value;
    } else if (key === 'limit' && allowLimit) {
      const n = Number(value);
      if (!/^\d+$/.test(value) || n < 1 || n > BUFFER_LINES) throw invalidField('limit', `limit is a whole number from 1 to ${BUFFER_LINES}.`);
      out.limit = n;
    } else {
      throw new GatewayError('filter.invalid', `"${key}" is not a filter of the log lines; use ${allowLimit ? 'level, q or limit' : 'level or q'}.`, key);
    }
  }
  return out;
}

export function addLogsApi(router: Router<Principal>, gw: GatewayContext): void {
  const answer = async () => {
    await gw.logs.settled();
    const level = gw.logs.level();
    const output = await gw.logs.output();
    const s = gw.config.view.logs;
    return {
      level: level.level,
      startupLevel: level.startupLevel,
      revertsAt: level.revertsAt === null ? null : seconds(level.revertsAt),
      accessLog: s.accessLog,
      mode: s.mode,
      nodeMode: output.mode,
      dropped: output.droppedBatches,
      droppedRecords: {
        app: output.droppedRecords.app + output.unshipped.app,
        access: output.droppedRecords.access + output.unshipped.access,
      },
      node: gw.settings.nodeName,
    };
  };

  router.add('GET', '/api/settings/logs', {
    summary: 'The log settings: level (with its countdown), access log switch, output mode, drops', tags: TAGS, auth: 'session',
    responses: { 200: { description: 'the settings as this node follows them', schema: SETTINGS } },
  }, async (ctx) => {
    requireCapability(ctx.principal, LOGS_CAPABILITY);
    return { body: await answer() };
  });

  router.add('PUT', '/api/settings/logs', {
    summary: 'Set the level, the access log switch or the output mode, on every node at once', tags: TAGS, auth: 'session',
    description: 'Any of level, accessLog and mode, at least one (the read-only members of the answer may be sent back; they change nothing). The level applies at once on every node and is not kept: a restart returns a node to GATEWAY_LOG_LEVEL, and a level more talkative than a node\'s startup level returns to it after 30 minutes (revertsAt); setting it again restarts the 30 minutes. Turning the level down never silences the access log. mode otlp needs the licensed edition and GATEWAY_OTLP_ENDPOINT. Audited settings.update.',
    body: {
      type: 'object', minProperties: 1, additionalProperties: false,
      properties: { level: SETTINGS.properties.level, accessLog: SETTINGS.properties.accessLog, mode: SETTINGS.properties.mode },
    },
    responses: {
      200: { description: 'saved; the settings as this node follows them now', schema: SETTINGS },
      ...WRITE_REFUSALS,
      403: { description: 'neither root nor infra-admin (capability); mode otlp on the community edition (licensed-edition)' },
      409: { description: 'mode otlp with no collector configured (logs.no-collector)' },
    },
  }, async (ctx) => {
    requireCapability(ctx.principal, LOGS_CAPABILITY);
    const change = parseLogSettings(await ctx.json());
    if (change.mode === 'otlp') {
      requireLicensed(gw.settings, 'Pushing the logs to a collector');
      if (!gw.settings.otlpEndpoint) {
        throw new GatewayError('logs.no-collector', 'The logs cannot be pushed: this gateway has no collector (set GATEWAY_OTLP_ENDPOINT to its OTLP/HTTP address and restart), so its logs stay on standard output and error.', 'mode');
      }
    }
    await gw.config.call('logs.put', { change, by: principalLabel(ctx.principal) }, callerOf(gw, ctx.principal, ctx.ex));
    return { body: await answer() };
  });

  router.add('GET', '/api/logs', {
    summary: 'This node\'s last 5,000 operational log lines, newest last', tags: TAGS, auth: 'session',
    description: `${QUERY_DOC} The access log is not here; each node keeps its own lines (node says whose).`,
    query: LINE_QUERY,
    schemas: LINE_SCHEMAS,
    responses: { 200: { description: '{node, lines}', schema: { type: 'object', required: ['node', 'lines'], properties: { node: { type: 'string' }, lines: { type: 'array', items: LINE } } } }, 400: { description: 'a bad filter (field.invalid, filter.invalid)' } },
  }, (ctx) => {
    requireCapability(ctx.principal, LOGS_CAPABILITY);
    return { body: { node: gw.settings.nodeName, lines: gw.logs.buffer.lines(lineQuery(ctx.query)).map(wire) } };
  });

  router.add('GET', '/api/logs/export', {
    summary: 'The same selection as GET /api/logs, as JSON Lines (.jsonl)', tags: TAGS, auth: 'session',
    description: `${QUERY_DOC} One line object per line, as GET /api/logs lists them.`,
    query: LINE_QUERY,
    schemas: LINE_SCHEMAS,
    responses: { 200: { description: 'one JSON line a record', type: 'application/jsonl' }, 400: { description: 'a bad filter (field.invalid, filter.invalid)' } },
  }, (ctx) => {
    requireCapability(ctx.principal, LOGS_CAPABILITY);
    const lines = gw.logs.buffer.lines(lineQuery(ctx.query));
    const stamp = new Date(gw.clock.now()).toISOString().replace(/[:.]/g, '-');
    return {
      raw: lines.map((l) => JSON.stringify(wire(l)) + '\n').join(''),
      headers: {
        'content-type': 'application/jsonl; charset=utf-8',
        'content-disposition': `attachment; filename="meerkat-logs-${gw.settings.nodeName}-${stamp}.jsonl"`,
        'cache-control': 'no-store',
      },
    };
  });
}

/** A line as the API and the feed send it: the record of CONTRACT.md, without the buffer's sequence. */
export function wire(l: { time: string; level: LogLevel; message: string; attrs: unknown; node: string }) {
  return { time: l.time, level: l.level, message: l.message, attrs: l.attrs, node: l.node };
}
