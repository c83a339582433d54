/*
 * The SRT streamid, as Core and the SRT access-control convention write it (reference 13.2).
 * Pure: the handshake callback of the addon applies the same rules in C++ for its early refusals;
 * this is the reference version, with the tests.
 */

import { streamNameProblem } from '../../sdk/index.ts';

export type SrtMode = 'publish' | 'request';

export interface StreamId {
  resource: string;
  mode: SrtMode;
  token?: string;
  /** Further keys of the `#!:` forms (e.g. `s`, `u`), for the ingest hooks' `params`. */
  params: Record<string, string>;
}

export type StreamIdResult = { ok: true; id: StreamId } | { ok: false; reason: string };

/**
 * Parses a streamid after URL-decoding it: Core's `resource[,mode:M][,token:T]` (a value runs to
 * the next `,mode:`/`,token:`, so a token may hold commas), or `#!::k=v,...` / the deprecated
 * `#!:k=v,...` with `r`, `m`, `token`. Mode defaults to `request`.
 */
export function parseStreamId(raw: string): StreamIdResult {
  let s: string;
  try {
    s = decodeURIComponent(raw);
  } catch {
    return { ok: false, reason: 'streamid is not validly URL-encoded' };
  }
  const parsed = s.startsWith('#!:') ? keyed(s.slice(s.startsWith('#!::') ? 4 : 3)) : current(s);
  if (!parsed.resource) return { ok: false, reason: 'streamid names no resource' };
  const bad = nameProblem(parsed.resource);
  if (bad) return { ok: false, reason: `invalid stream name: ${bad}` };
  if (parsed.mode !== 'publish' && parsed.mode !== 'request') return { ok: false, reason: `unknown mode '${parsed.mode}'` };
  const id: StreamId = { resource: parsed.resource, mode: parsed.mode, params: parsed.params };
  if (parsed.token !== undefined) id.token = parsed.token;
  return { ok: true, id };
}

/** Why a stream name (the resource) is refused, or undefined: the SDK's rule for every protocol. */
export const nameProblem = streamNameProblem;

interface Loose { resource: string; mode: string; token?: string; params: Record<string, string> }

function keyed(body: string): Loose {
  const out: Loose = { resource: '', mode: 'request', params: {} };
  for (const pair of body.split(',')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const k = pair.slice(0, eq);
    const v = pair.slice(eq + 1);
    if (k === 'r') out.resource = v;
    else if (k === 'm') out.mode = v;
    else if (k === 'token') out.token = v;
    else out.params[k] = v;
  }
  return out;
}

const MARK = /,(mode|token):/g;

function current(s: string): Loose {
  const marks = [...s.matchAll(MARK)];
  const out: Loose = { resource: s.slice(0, marks[0]?.index ?? s.length), mode: 'request', params: {} };
  marks.forEach((m, i) => {
    const value = s.slice(m.index + m[0].length, marks[i + 1]?.index ?? s.length);
    if (m[1] === 'mode') out.mode = value;
    else out.token = value;
  });
  return out;
}

/** Builds Core's streamid for local callers (the `{srt}` placeholder); ffmpeg passes it as is. */
export function formatStreamId(resource: string, mode: SrtMode, token: string): string {
  return `${resource},mode:${mode}${token ? `,token:${token}` : ''}`;
}
