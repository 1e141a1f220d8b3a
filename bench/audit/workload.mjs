// workload.mjs - what the endpoint-audit bench asks and how the route is set up, shared by run.mjs (wrk's Lua
// script, the readiness call) and start-meerkat.mjs (route, contract, rules).
//
// The load is one operation of the route's contract, POST /orders/{orderId}/lines, with a small JSON body:
// of the two shapes the rules allow to compare (a GET with a path variable, a POST with a body), the POST does
// all the GET's audit work (operation match, a path variable read) and more: the body is copied aside while it
// streams to the service, parsed, read by JSON pointers, masked and encoded into the line, which is also about
// three times larger to carry to the writer and store.

/** Modes of start-meerkat.mjs, one per target. */
export const MODES = {
  meerkat: 'none', // licensed, contract on the route, no audit rule
  'meerkat+audit': 'on', // the operation the load calls is audited
  'meerkat+audit-off': 'off', // its rule is switched off; another operation of the route stays on
};

export const ORDER_LINE = 'POST /orders/{orderId}/lines';
const READ_ORDER = 'GET /orders/{orderId}';

/** The route's OpenAPI contract: the service's paths, as the route forwards them (stripPrefix). */
export const CONTRACT = {
  openapi: '3.0.3',
  info: { title: 'Orders', version: '1.0.0' },
  paths: {
    '/orders/{orderId}': {
      parameters: [{ name: 'orderId', in: 'path', required: true, schema: { type: 'string' } }],
      get: { summary: 'Read an order', responses: { 200: { description: 'the order' } } },
    },
    '/orders/{orderId}/lines': {
      parameters: [{ name: 'orderId', in: 'path', required: true, schema: { type: 'string' } }],
      post: {
        summary: 'Add a line to an order',
        requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
        responses: { 200: { description: 'the order' } },
      },
    },
  },
};

const ORDER_LINE_RULE = {
  description: 'Order line added',
  body: true,
  secretFields: ['iban'],
  fields: {
    order: 'path:orderId',
    customer: 'body:/customer/id',
    sku: 'body:/sku',
    request: 'header:x-request-id',
    channel: 'query:channel',
  },
};

/**
 * The audit rules for a mode, or null (no PUT /api/routes/bench/audit). "off" keeps another operation on:
 * with no operation on anywhere the gateway opens no request record at all, and "off" would measure the
 * same thing as "none".
 */
export function rulesFor(mode) {
  if (mode === 'none') return null;
  if (mode === 'on') return { operations: { [ORDER_LINE]: { on: true, ...ORDER_LINE_RULE } } };
  if (mode === 'off') return { operations: { [ORDER_LINE]: { on: false, ...ORDER_LINE_RULE }, [READ_ORDER]: { on: true, fields: { order: 'path:orderId' } } } };
  throw new Error(`unknown AUDIT_MODE "${mode}" (none, on, off)`);
}

/** The one request of the load (the data plane's route is /bench, stripped before the service). */
export const REQUEST = {
  method: 'POST',
  path: '/bench/orders/o-1042/lines?channel=web',
  headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'bench-7f3a9c' },
  body: JSON.stringify({
    customer: { id: 'c-77', name: 'Ada Lovelace' },
    sku: 'MK-7-BLUE',
    quantity: 2,
    note: 'leave at the door',
    payment: { iban: 'DE89370400440532013000' },
  }),
};

/** wrk's script: the request is built once (no request() function), so wrk's cost is the same as for a GET. */
export function wrkLua() {
  const lua = (s) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  return [
    `wrk.method = ${lua(REQUEST.method)}`,
    `wrk.body = ${lua(REQUEST.body)}`,
    ...Object.entries(REQUEST.headers).map(([k, v]) => `wrk.headers[${lua(k)}] = ${lua(v)}`),
    '',
  ].join('\n');
}
