/**
 * Read by uWebSockets.js once, when its module loads: the largest request head (request line and
 * headers) it takes. Its own default, 4 KiB, answers 431 to a browser carrying a large cookie or an
 * application sending a JWT, before the gateway sees the request. 16 KiB is node:http's default, so
 * the plain and the HTTPS doors accept the same heads. uws-door.ts imports this module before uWS.
 */
export const MAX_HEAD_BYTES = 16 * 1024;

process.env.UWS_HTTP_MAX_HEADERS_SIZE = String(MAX_HEAD_BYTES);
