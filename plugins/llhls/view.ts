/*
 * The `llhls` mount's view in every serving thread (`FsPublicMount.view`): it answers `/hls` reads
 * from the thread's copy of the store's feed (`feed.ts`, `view-state.ts`), so a thread holds a
 * blocking playlist reload or the hinted part itself, without a hop to main:
 * - `index.m3u8` / `plain.m3u8`: the token (`llhls.token`) checked, then served from the stream's
 *   fed state to a viewer main admitted (its `prePlay` taps ran there), a blocking reload decided
 *   as main decides it (`decideReload`: the same 400s) and held until the state is ready (503
 *   after the timeout); the answer is the file main makes for that version (bytes, ETag,
 *   Cache-Control);
 * - parts, segments, inits: the copy's files; the hinted part held until it is in the copy.
 * Main answers what the view cannot decide: other files (`master.m3u8`, `dvr.m3u8`), a stream
 * with no state here (the view asks main to feed it: `want`), not started or ended, a viewer not
 * admitted yet, a client whose address the thread cannot tell. Each viewer's use is reported (at
 * most once a second per stream and viewer) so main keeps the packager and the viewer.
 * Loaded in every serving thread: it imports the pure modules it needs, never the SDK's index.
 */
import { safeEqual } from '../../sdk/basic-credentials.ts';
import type { FsFile, FsNode } from '../../sdk/fs.ts';
import type { FsView, FsViewAsk, FsViewContext, FsViewFactory } from '../../sdk/fs-view.ts';
import { NO_CACHE, playlistFile } from './answers.ts';
import { llhlsErrors } from './errors.ts';
import { decideReload, isReady } from './playlist-reload.ts';
import { decodeState, statePath, viewerPath, type FedState, type TextKind, type ViewMessage } from './view-state.ts';

/** `FsPublicMount.view.init` of the `llhls` store. */
export interface LlhlsViewInit {
  token: string;
}

/** A stream's use (or want) is told main at most this often per stream and viewer. */
const TELL_MS = 1000;
/** Keys of the last messages remembered at most (all forgotten beyond). */
const TOLD_MAX = 10_000;

interface Decoded {
  file: FsFile;
  state: FedState;
  /** The answers made of it, by kind and Cache-Control. */
  answers: Map<string, FsFile>;
}

export class LlhlsView implements FsView {
  #ctx: FsViewContext;
  #token: string;
  #states = new Map<string, Decoded>();
  /** Held requests' checks, by the path whose change may make them ready. */
  #waiters = new Map<string, Set<() => void>>();
  /** Every held request's end (the view closes: each ends as its timeout would). */
  #held = new Set<() => void>();
  #told = new Map<string, number>();

  constructor(init: LlhlsViewInit, ctx: FsViewContext) {
    this.#ctx = ctx;
    this.#token = init.token;
    ctx.onChange((path) => {
      const w = this.#waiters.get(path);
      if (w) for (const check of [...w]) check();
    });
  }

  open(path: string, ask: FsViewAsk): FsNode | undefined | Promise<FsNode | undefined> {
    const slash = path.lastIndexOf('/');
    // the feed's own files (`.state`, `.viewers/`) are never served: main's 404
    if (slash <= 0 || path.includes('/.')) return undefined;
    const name = path.slice(1, slash);
    const file = path.slice(slash + 1);
    if (file === 'index.m3u8' || file === 'plain.m3u8') return this.#playlist(name, file, ask);
    const f = this.#ctx.get(path);
    if (f) return { kind: 'file', path, file: f };
    const st = this.#state(name);
    if (st?.hint !== file || st.ended) return undefined;
    // the preload hint: held until the part is in the copy (or the stream's state changed its mind)
    const done = () => this.#ctx.get(path) !== undefined || this.#state(name)?.hint !== file;
    return this.#until([path, statePath(name)], done, 3000 * st.targetDuration).then(() => {
      const got = this.#ctx.get(path);
      return got && { kind: 'file', path, file: got };
    });
  }

  #playlist(name: string, file: string, ask: FsViewAsk): FsNode | undefined | Promise<FsNode | undefined> {
    const q = new URLSearchParams(ask.query);
    const token = q.get('token') ?? '';
    if (this.#token !== '' && !safeEqual(token, this.#token)) {
      // a user's key (`<user>:<token>`): main asks IAM when it admits the viewer; here only an admitted one is served
      if (!token.includes(':')) throw llhlsErrors.token();
      if (ask.remote === undefined || !this.#ctx.get(viewerPath(name, ask.remote, token))) return undefined;
    }
    if (ask.remote === undefined) return undefined;
    const st = this.#state(name);
    if (!st) {
      this.#tell(`w\n${name}`, { t: 'want', stream: name });
      return undefined;
    }
    // a viewer main has not admitted (or let go) runs the prePlay taps there; main starts, waits and ends streams
    if (!this.#ctx.get(viewerPath(name, ask.remote, token)) || st.ended || st.segments === 0) return undefined;
    this.#tell(`u\n${name}\n${ask.remote}\n${token}`, { t: 'use', stream: name, ip: ask.remote, token });
    if (file === 'plain.m3u8') return this.#answer(name, file, st, 'plain', NO_CACHE);
    const reload = { msn: q.get('_HLS_msn') ?? undefined, part: q.get('_HLS_part') ?? undefined, skip: q.get('_HLS_skip') ?? undefined };
    const d = decideReload(st, reload);
    if (d.kind === 'refuse') throw d.error;
    const kind: TextKind = d.skip ? `ll${d.skip}` : 'll';
    // a blocking answer names a state that never changes: a CDN may keep it (as main says)
    const answer = (s: FedState) => this.#answer(name, file, s, kind, reload.msn === undefined ? NO_CACHE : ['cache-control', `public, max-age=${6 * s.targetDuration}`]);
    if (d.kind === 'now') return answer(st);
    const ready = () => {
      const s = this.#state(name);
      return s === undefined || isReady(s, d.msn, d.part);
    };
    return this.#until([statePath(name)], ready, d.timeoutMs).then((ok) => {
      const s = this.#state(name);
      if (!s) return undefined;
      if (!ok) throw llhlsErrors.reloadTimeout(d.msn, d.part);
      return answer(s);
    });
  }

  /** The stream's fed state now (decoded once per version), or undefined. */
  #state(name: string): FedState | undefined {
    const f = this.#ctx.get(statePath(name));
    if (!f?.data) {
      this.#states.delete(name);
      return undefined;
    }
    let d = this.#states.get(name);
    if (d?.file !== f) {
      d = { file: f, state: decodeState(f.data), answers: new Map() };
      this.#states.set(name, d);
    }
    return d.state;
  }

  /** A playlist of the state as main answers it (one file per kind and Cache-Control: its gzip memo is kept). */
  #answer(name: string, file: string, st: FedState, kind: TextKind, cache: readonly string[]): FsNode {
    const d = this.#states.get(name)!;
    const key = `${kind}\n${cache[1]}`;
    let f = d.state === st ? d.answers.get(key) : undefined;
    if (!f) {
      const text = st.texts[kind];
      f = playlistFile(text.data, text.etag, text.mtimeMs, cache);
      if (d.state === st) d.answers.set(key, f);
    }
    return { kind: 'file', path: `/${name}/${file}`, file: f };
  }

  /** Resolves true once `ready()` holds (checked after each change of `paths`), else with its value after `ms`. */
  #until(paths: readonly string[], ready: () => boolean, ms: number): Promise<boolean> {
    if (ready()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = () => { if (ready()) end(); };
      const end = () => {
        clearTimeout(timer);
        this.#held.delete(end);
        for (const p of paths) {
          const w = this.#waiters.get(p);
          w?.delete(check);
          if (w?.size === 0) this.#waiters.delete(p);
        }
        resolve(ready());
      };
      for (const p of paths) {
        let w = this.#waiters.get(p);
        if (!w) this.#waiters.set(p, w = new Set());
        w.add(check);
      }
      this.#held.add(end);
      const timer = setTimeout(end, ms);
    });
  }

  /** Tells main `message` unless the same `key` was told within TELL_MS. */
  #tell(key: string, message: ViewMessage): void {
    const now = Date.now();
    const last = this.#told.get(key);
    if (last !== undefined && now - last < TELL_MS) return;
    if (this.#told.size >= TOLD_MAX) this.#told.clear();
    this.#told.set(key, now);
    this.#ctx.send(message);
  }

  close(): void {
    for (const end of [...this.#held]) end();
  }
}

const factory: FsViewFactory = (init, ctx) => new LlhlsView(init as LlhlsViewInit, ctx);
export default factory;
