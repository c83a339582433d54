/*
 * restreamer-ui's Settings page, as data (datarhei/restreamer-ui, src/views/Settings.js at 8a45e4c):
 * it loads `GET /api/v3/config` (`{config: {...}, ...}`), turns some fields into form text (lists
 * to lines, listen addresses to their port), and on save turns them back (a port to `:port`) and
 * sends the WHOLE config object with `PUT /api/v3/config`.
 */

export type UiConfig = Record<string, any>;

const lines = (v: string[]) => v.join('\n');
const list = (v: string, sep: string) => v.split(sep).map((s) => s.trim()).filter((s) => s.length > 0);
const port = (address: string) => address.split(':').join('');
const ADDRESSES = ['address', 'tls.address', 'rtmp.address', 'rtmp.address_tls', 'srt.address'];

/** The page's load: arrays to text, addresses to ports. */
export function uiLoad(c: UiConfig): UiConfig {
  const x = structuredClone(c);
  x.host.name = x.host.name.join(', ');
  x.storage.cors.allow_all = x.storage.cors.origins.length === 1 && x.storage.cors.origins[0] === '*';
  x.storage.cors.origins = lines(x.storage.cors.origins);
  x.storage.disk.cache.types.allow = lines(x.storage.disk.cache.types.allow);
  x.storage.disk.cache.types.block = lines(x.storage.disk.cache.types.block);
  x.sessions.ip_ignorelist = lines(x.sessions.ip_ignorelist);
  if (x.tls.enable === false) x.tls.auto = false;
  for (const k of ADDRESSES) set(x, k, port(get(x, k)));
  return x;
}

/** The page's save: text back to arrays, ports back to addresses; the whole object is PUT. */
export function uiSave(x: UiConfig): UiConfig {
  const c = structuredClone(x);
  c.host.name = list(c.host.name, ',');
  c.storage.cors.origins = c.storage.cors.allow_all ? ['*'] : list(c.storage.cors.origins, '\n');
  delete c.storage.cors.allow_all;
  c.storage.disk.cache.types.allow = list(c.storage.disk.cache.types.allow, '\n');
  c.storage.disk.cache.types.block = list(c.storage.disk.cache.types.block, '\n');
  c.sessions.ip_ignorelist = list(c.sessions.ip_ignorelist, '\n');
  for (const k of ADDRESSES) set(c, k, `:${get(c, k)}`);
  if (!c.rtmp.app.startsWith('/')) c.rtmp.app = `/${c.rtmp.app}`;
  c.tls.enable = c.tls.auto === true;
  return c;
}

function get(o: UiConfig, path: string): any {
  return path.split('.').reduce((v, k) => v[k], o);
}
function set(o: UiConfig, path: string, value: unknown): void {
  const keys = path.split('.');
  const last = keys.pop()!;
  keys.reduce((v, k) => v[k], o)[last] = value;
}
