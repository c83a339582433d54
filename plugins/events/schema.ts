import { ConfigErrorList, EventsConfig, globToRegExp, type ConfigErrors } from '../../sdk/index.ts';

/** The plugin's settings: the `events` section (history, SSE bounds, webhooks). */
export const EventsPluginConfig = EventsConfig;

const KEYED = /^[A-Za-z_][A-Za-z0-9_]*:/;

/** Bounds, webhook URLs (http or https) and filter globs. */
export function validateEvents(s: EventsConfig): ConfigErrors {
  const errs = new ConfigErrorList();
  if (s.history < 1 || s.history > 1_000_000) errs.add('history', 'must be between 1 and 1000000');
  if (s.heartbeat_ms !== 0 && s.heartbeat_ms < 100) errs.add('heartbeat_ms', 'must be 0 (off) or at least 100');
  if (s.client_buffer_kbytes < 1) errs.add('client_buffer_kbytes', 'must be at least 1');
  if (s.overflow_grace_ms < 0) errs.add('overflow_grace_ms', 'must not be negative');
  if (s.webhook_queue < 1) errs.add('webhook_queue', 'must be at least 1');
  if (s.webhook_retry_seconds < 0) errs.add('webhook_retry_seconds', 'must not be negative');
  if (s.webhook_timeout_seconds < 1) errs.add('webhook_timeout_seconds', 'must be at least 1');
  s.webhooks.forEach((w, i) => {
    let u: URL | undefined;
    try { u = new URL(w.url); } catch { /* reported below */ }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) errs.add(`webhooks.${i}.url`, `'${w.url}' is not an http(s) URL`);
    for (const g of w.types ?? []) if (!globToRegExp(g)) errs.add(`webhooks.${i}.types`, `malformed glob '${g}'`);
    for (const g of w.subjects ?? []) if (!globToRegExp(g.replace(KEYED, ''))) errs.add(`webhooks.${i}.subjects`, `malformed glob '${g}'`);
  });
  return errs.map;
}
