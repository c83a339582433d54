import type { TSchema } from '@sinclair/typebox';
import { getPath, isPlainObject, setPath } from './schema-walk.ts';

/*
 * Lenient decoding of config bodies, as the reference's JSON decoder does it (see README.md in
 * this folder): `null` for a list or a map is empty, `null` for an object or a scalar leaves the
 * current value alone; older layouts (1, 2) are lifted to 3 before merging.
 */

function kind(schema: TSchema | undefined): 'array' | 'map' | 'object' | 'other' {
  if (!schema) return 'other';
  if (schema.type === 'array') return 'array';
  if (schema.type === 'object' && (schema as { patternProperties?: unknown }).patternProperties) return 'map';
  if (schema.type === 'object' && (schema as { properties?: unknown }).properties) return 'object';
  return 'other';
}

/**
 * Replaces or drops the `null`s of a body in place, following the config schema. Returns the
 * dotted paths of maps sent as `null`: a merge would keep their old entries, so the caller empties
 * them after merging.
 */
export function decodeNulls(body: Record<string, unknown>, schema: TSchema, prefix = ''): string[] {
  const cleared: string[] = [];
  const props = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  for (const [key, value] of Object.entries(body)) {
    const sub = props[key];
    if (value === null) {
      // an empty plugin list would unload everything: not what a client sending null means
      const k = key === 'plugins' && sub === props.plugins && 'version' in props ? 'other' : kind(sub);
      if (k === 'array') body[key] = [];
      else if (k === 'map') { body[key] = {}; cleared.push(prefix + key); }
      else delete body[key];
    } else if (isPlainObject(value) && kind(sub) === 'object') {
      cleared.push(...decodeNulls(value, sub!, `${prefix}${key}.`));
    } else if (Array.isArray(value) && kind(sub) === 'array') {
      const items = (sub as { items?: TSchema }).items;
      if (kind(items) === 'object') for (const v of value) if (isPlainObject(v)) decodeNulls(v, items!);
    }
  }
  return cleared;
}

/** `host:port` with the port lowered by one (v1 -> v2 of `rtmp.address` when RTMPS was on). */
function portMinusOne(address: string): string {
  const m = /^(.*):(\d+)$/.exec(address);
  return m ? `${m[1]}:${Number(m[2]) - 1}` : address;
}

/**
 * Lifts a layout 1 or 2 config (a whole file or a PUT body) to layout 3 in place (reference 6.4).
 * Keys that layout 3 added are dropped from a body in an older layout, so they keep their values.
 */
export function upgradeLayout(raw: Record<string, unknown>, version: 1 | 2, body = false): void {
  if (version === 1) {
    const app = getPath(raw, 'rtmp.app');
    if (typeof app === 'string' && !app.startsWith('/')) setPath(raw, 'rtmp.app', '/' + app);
    const address = getPath(raw, 'rtmp.address');
    if (getPath(raw, 'rtmp.enable_tls') === true && typeof address === 'string') {
      setPath(raw, 'rtmp.enable', true);
      setPath(raw, 'rtmp.address_tls', address);
      setPath(raw, 'rtmp.address', portMinusOne(address));
    } else if (body && isPlainObject(raw.rtmp)) {
      delete raw.rtmp.address_tls;
    }
  }
  const types = getPath(raw, 'storage.disk.cache.types');
  if (Array.isArray(types)) setPath(raw, 'storage.disk.cache.types', { allow: types });
  else if (body && isPlainObject(getPath(raw, 'storage.disk.cache'))) delete (getPath(raw, 'storage.disk.cache') as Record<string, unknown>).types;
  if (body) {
    if (isPlainObject(raw.tls)) delete raw.tls.email;
    if (isPlainObject(raw.debug)) delete raw.debug.memory_limit_mbytes;
    if (isPlainObject(raw.storage)) delete raw.storage.s3;
  }
  raw.version = 3;
}
