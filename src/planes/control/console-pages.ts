/**
 * The console's own addresses (CONTRACT.md "Console"): each loads the application, which shows the
 * screen; a deep link or a reload lands on the same screen. The application's router
 * (console/src/pages.ts) names the same list; a browser test opens each one directly.
 */
export const CONSOLE_PAGES = [
  '/scheduler',
  '/tls',
  '/audit',
  '/logs',
  '/data-plane/metrics',
  '/access',
] as const;
