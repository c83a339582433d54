/*
 * What main's `llhls` store feeds the serving threads' view (`view.ts`) besides the packaged
 * files, and what the view tells main. Pure, and loaded in every serving thread: node:crypto only.
 * - `/<stream>/.state`: per stream a thread asked for recently, after every packager version, the
 *   numbers a reload decision reads (`ReloadView`), the first segment's arrival, the preload hint
 *   and the rendered playlists (LL, LL with `_HLS_skip=YES`, with `v2`, plain) with their ETags,
 *   the very files main answers for that version;
 * - `/<stream>/.viewers/<key>`: a viewer main admitted (the `prePlay` taps), while it is kept.
 * Dot-files are never served: the view hides them, and main's store has no such file.
 */
import { createHash } from 'node:crypto';
import type { ReloadView } from './playlist-reload.ts';

/** The playlists of a state: `ll` (no skip), `llYES`, `llv2` (delta updates), `plain`. */
export const TEXT_KINDS = ['ll', 'llYES', 'llv2', 'plain'] as const;
export type TextKind = (typeof TEXT_KINDS)[number];

export interface FedText {
  etag: string;
  mtimeMs: number;
  data: Buffer;
}

/** One stream's state as a view reads it. */
export interface FedState extends ReloadView {
  /** Complete segments in the window (none yet: main waits for the first). */
  segments: number;
  /** URI of the part being written (`EXT-X-PRELOAD-HINT`), if any. */
  hint: string | undefined;
  texts: Record<TextKind, FedText>;
}

/** What a view sends the store: a stream's state is wanted; a viewer used a stream (both at most once a second). */
export type ViewMessage = { t: 'want'; stream: string } | { t: 'use'; stream: string; ip: string; token: string };

export const statePath = (stream: string): string => `/${stream}/.state`;

/** A viewer's entry: its address and token hashed (the path names no secret). */
export const viewerPath = (stream: string, ip: string, token: string): string =>
  `/${stream}/.viewers/${createHash('sha256').update(`${ip}\n${token}`).digest('base64url').slice(0, 22)}`;

/** A state as one buffer in shared memory (the threads' copies share it): its header's length, the header, the texts. */
export function encodeState(s: FedState): Buffer {
  const texts = TEXT_KINDS.map((k) => [k, s.texts[k].etag, s.texts[k].mtimeMs, s.texts[k].data.length] as const);
  const head = Buffer.from(JSON.stringify({
    ended: s.ended, partTarget: s.partTarget, targetDuration: s.targetDuration, lastMsn: s.lastMsn, openMsn: s.openMsn,
    openParts: s.openParts, newestPart: s.newestPart, segments: s.segments, hint: s.hint, texts,
  }));
  let size = 4 + head.length;
  for (const k of TEXT_KINDS) size += s.texts[k].data.length;
  const out = Buffer.from(new SharedArrayBuffer(size));
  out.writeUInt32BE(head.length, 0);
  let at = 4 + head.copy(out, 4);
  for (const k of TEXT_KINDS) at += s.texts[k].data.copy(out, at);
  return out;
}

/** The state `encodeState` made; the texts are views of `buf`, not copies. */
export function decodeState(buf: Buffer): FedState {
  const len = buf.readUInt32BE(0);
  const head = JSON.parse(buf.subarray(4, 4 + len).toString()) as Omit<FedState, 'texts'> & { texts: Array<[TextKind, string, number, number]> };
  let at = 4 + len;
  const texts = {} as Record<TextKind, FedText>;
  for (const [kind, etag, mtimeMs, size] of head.texts) {
    texts[kind] = { etag, mtimeMs, data: buf.subarray(at, at + size) };
    at += size;
  }
  return { ...head, newestPart: head.newestPart ?? undefined, hint: head.hint ?? undefined, texts };
}

const isText = (v: unknown): v is string => typeof v === 'string' && v.length <= 1024;

/** A view's message, checked (it crossed a thread boundary: never trusted blindly). */
export function viewMessage(m: unknown): ViewMessage | undefined {
  const o = m as Partial<Record<string, unknown>> | undefined;
  if (typeof o !== 'object' || o === null || !isText(o.stream)) return undefined;
  if (o.t === 'want') return { t: 'want', stream: o.stream };
  if (o.t === 'use' && isText(o.ip) && isText(o.token)) return { t: 'use', stream: o.stream, ip: o.ip, token: o.token };
  return undefined;
}
