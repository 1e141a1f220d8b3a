/**
 * The mail server named by GATEWAY_SMTP_URL. Read by the settings (to refuse a bad value at boot)
 * and by the mailer (to connect), so both agree on what a URL means. A refusal never quotes the
 * URL: it may hold a password.
 */
export interface SmtpTarget {
  /** smtps://: TLS from the first byte. smtp://: plain, upgraded by STARTTLS when offered. */
  readonly secure: boolean;
  /** Without brackets, also for an IPv6 address. */
  readonly host: string;
  readonly port: number;
  /** Percent-decoded user name and password, when the URL carries them. */
  readonly user: string | undefined;
  readonly password: string | undefined;
  /** `host:port` (`[v6]:port`) for sentences and logs; never the credentials. */
  readonly server: string;
}

/** The submission ports (RFC 8314): 587 for STARTTLS, 465 for implicit TLS. */
const DEFAULT_PORT = { 'smtp:': 587, 'smtps:': 465 } as const;

/** The target, or the reason the text is not an smtp:// or smtps:// URL. */
export function parseSmtpUrl(text: string): SmtpTarget | string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return 'is not a URL; write smtp://host:587 or smtps://user:password@host:465';
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    return `uses "${url.protocol}"; write smtp:// (STARTTLS when the server offers it) or smtps:// (TLS from the first byte)`;
  }
  if (url.hostname === '') return 'names no mail server; write smtp://host:port';
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
    return 'carries a path, query or fragment; write smtp://host:port';
  }
  let user: string | undefined;
  let password: string | undefined;
  try {
    user = url.username === '' ? undefined : decodeURIComponent(url.username);
    password = url.password === '' ? undefined : decodeURIComponent(url.password);
  } catch {
    return 'holds a user name or password that is not valid percent-encoding (write a "%" as %25)';
  }
  if ((user === undefined) !== (password === undefined)) return 'gives a user name or a password alone; write both, or neither';
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port === '' ? DEFAULT_PORT[url.protocol] : Number(url.port);
  return { secure: url.protocol === 'smtps:', host, port, user, password, server: `${url.hostname}:${port}` };
}
