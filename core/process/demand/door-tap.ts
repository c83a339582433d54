import type { FileDoorTapContext, FileDoorTaps } from '../../../sdk/file-door.ts';
import type { FsServeRefusal, FsServeRequest, FsServedEvent } from '../../../sdk/fs-hooks.ts';
import { linearRegex, type LinearRegex } from '../../../sdk/linear-regex.ts';
import { CLIENT_OVER, clientKey, RESOURCES_OVER, TOTAL_OVER, type BudgetMessage } from './budget.ts';

/** A file name longer than this is no segment (a file system's names end at 255 bytes). */
const MAX_SEGMENT_NAME = 255;

/*
 * The on-demand half of the file door, a door tap module (sdk/file-door.ts): one copy next to
 * every copy of the door, main's and each serving thread's. It knows which playlists and
 * segment names belong to which on-demand process (the engine broadcasts that table) and tells
 * the engine who was answered them, at most once a second per process and client. It refuses
 * (429) only a request that would start a waiting process for a client over the engine's budget
 * (budget.ts, decided on main and told to every copy), and never changes an answer. Imports SDK
 * files one by one: this module is loaded in every thread.
 */

/** The engine's table: exact playlist keys and per-folder segment patterns (`mount\0path`). */
export interface DemandTableMessage {
  t: 'table';
  playlists: Array<[key: string, id: string]>;
  segments: Array<[dirKey: string, pattern: string, id: string]>;
}

/** What a copy tells the engine: a client asked for a file of process `id`. */
export interface DemandHit {
  id: string;
  remote: string;
}

/** A copy sends a client's requests of one process this often at most, ms. */
export const HIT_EVERY_MS = 1000;

export const demandKey = (mount: string, path: string): string => `${mount}\0${path}`;

/** The process a request's file belongs to, from the table. */
export class DemandMatcher {
  #playlists = new Map<string, string>();
  #segments = new Map<string, Array<[LinearRegex, string]>>();

  load(m: DemandTableMessage): void {
    this.#playlists = new Map(m.playlists);
    const seg = new Map<string, Array<[LinearRegex, string]>>();
    for (const [dir, pattern, id] of m.segments) {
      // linear: a file name a viewer sends meets it (`^seg\d+\d+\.ts$` of `%d%d` backtracked 4 s on 60,000 digits)
      const re = linearRegex(pattern);
      if (!re) continue;
      let list = seg.get(dir);
      if (!list) seg.set(dir, (list = []));
      list.push([re, id]);
    }
    this.#segments = seg;
  }

  match(mount: string, path: string): string | undefined {
    // no on-demand process (the usual case): nothing built per request on the file path
    if (this.#playlists.size === 0 && this.#segments.size === 0) return undefined;
    const exact = this.#playlists.get(demandKey(mount, path));
    if (exact !== undefined || this.#segments.size === 0) return exact;
    const slash = path.lastIndexOf('/');
    const list = this.#segments.get(demandKey(mount, slash <= 0 ? '/' : path.slice(0, slash)));
    if (!list) return undefined;
    const name = path.slice(slash + 1);
    if (name.length > MAX_SEGMENT_NAME) return undefined;
    for (const [re, id] of list) if (re.test(name)) return id;
    return undefined;
  }
}

/** The budget as main last told this copy: a request that would start a process over it gets 429. */
class BudgetView {
  #waiting = new Set<string>();
  #full = 0;
  #resources = 0;
  #blocked = new Map<string, number>();

  load(m: BudgetMessage): void {
    this.#waiting = new Set(m.waiting);
    this.#full = m.full;
    this.#resources = m.resources ?? 0;
    this.#blocked = new Map(m.blocked);
  }

  /** Whether any request could be refused now (else nothing is looked up per request). */
  get armed(): boolean {
    return this.#waiting.size > 0 && (this.#full > 0 || this.#resources > 0 || this.#blocked.size > 0);
  }

  refusal(id: string, remote: string): FsServeRefusal | undefined {
    if (!this.#waiting.has(id)) return undefined;
    if (this.#resources > 0) {
      return { status: 429, message: 'Too Many Requests', details: [RESOURCES_OVER], code: 'ONDEMAND_RESOURCES', retryAfter: this.#resources };
    }
    if (this.#full > 0) return { status: 429, message: 'Too Many Requests', details: [TOTAL_OVER], code: 'ONDEMAND_LIMIT', retryAfter: this.#full };
    if (this.#blocked.size === 0) return undefined;
    const left = (this.#blocked.get(clientKey(remote)) ?? 0) - Date.now();
    if (left <= 0) return undefined;
    return { status: 429, message: 'Too Many Requests', details: [CLIENT_OVER], code: 'ONDEMAND_CLIENT_LIMIT', retryAfter: Math.ceil(left / 1000) };
  }
}

/**
 * The taps of one copy. A request counts once the door answered it with the file (2xx/3xx):
 * `onServed` runs after every `preServe` tap, so a reader another tap refused (the sessions
 * plugin's 509 over its limits, 403 for a bad session id, a vendor's refusal) starts nothing,
 * whatever the order the taps were put in. An address the sessions ignore is answered, so it counts.
 */
export default function demandDoorTaps(ctx: FileDoorTapContext): FileDoorTaps {
  const matcher = new DemandMatcher();
  const budget = new BudgetView();
  const sent = new Map<string, number>();
  ctx.onMessage((raw) => {
    const m = raw as DemandTableMessage | BudgetMessage;
    if (m?.t === 'table') matcher.load(m);
    else if (m?.t === 'budget') budget.load(m);
  });
  ctx.send({ t: 'hello' });
  return {
    preServe(req: FsServeRequest): FsServeRefusal | undefined {
      if (!budget.armed) return undefined;
      const id = matcher.match(req.mount, req.path);
      return id === undefined ? undefined : budget.refusal(id, req.remote);
    },
    onServed(ev: FsServedEvent): void {
      if (ev.status >= 400) return;
      const req = ev.request;
      const id = matcher.match(req.mount, req.path);
      if (id === undefined) return;
      const key = `${id}\0${req.remote}`;
      const now = Date.now();
      if (now - (sent.get(key) ?? -Infinity) < HIT_EVERY_MS) return;
      if (sent.size >= 10_000) sent.clear();
      sent.set(key, now);
      ctx.send({ id, remote: req.remote } satisfies DemandHit);
    },
  };
}
