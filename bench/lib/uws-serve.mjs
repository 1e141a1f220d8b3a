// uws-serve.mjs - how the benches' own uWebSockets.js servers (bench/proxy's floor, bench/scheduler's upstream)
// listen and stop: on 127.0.0.1, the port printed once bound (the harnesses wait for that line), closed on
// SIGTERM or SIGINT.
import * as uWS from 'uWebSockets.js';

/** Listens on 127.0.0.1:port (0 = any) or exits 1; prints "<name> listening on 127.0.0.1:<port><suffix>". */
export function serveUntilStopped(app, port, name, suffix = '') {
  let listenSocket = null;
  app.listen('127.0.0.1', port, (ls) => { // runs synchronously
    if (!ls) { console.error(`${name}: cannot listen on 127.0.0.1:${port}`); process.exit(1); }
    listenSocket = ls;
    console.log(`${name} listening on 127.0.0.1:${uWS.us_socket_local_port(ls)}${suffix}`);
  });
  const stop = () => {
    if (listenSocket) uWS.us_listen_socket_close(listenSocket);
    listenSocket = null;
    setTimeout(() => process.exit(0), 200).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
