import type { Logger } from 'pino';
import type {
  CoreEvent, EventFilter, EventsService, EventSubject, EventSubscription, EventTypeSpec,
} from '../../sdk/index.ts';
import { maskDeep } from '../../sdk/index.ts';
import { compileFilter, type EventMatcher } from './filter.ts';
import { EventRing } from './ring.ts';

/** What outlives a config reload (`ctx.retain`): the run's name, its ids and its history. */
export interface Retained {
  boot: string;
  ring: EventRing;
  /** Apps built in this run: 1 at the first boot, more after reloads. */
  apps: number;
}

interface Subscriber {
  match: EventMatcher;
  /** Id of the last event this subscriber has been offered. */
  cursor: number;
  onEvent(e: CoreEvent): void;
  closed: boolean;
}

const ID = /^(?:([0-9a-z]+)-)?(\d{1,15})$/;

/**
 * The event bus: `emit` stamps and stores an event and schedules one delivery pass per tick
 * (`setImmediate`), so the emitter's stack (the process engine, an ingest socket) never runs a
 * subscriber. A pass offers each subscriber the events after its cursor, in id order.
 */
export class EventBus implements EventsService {
  readonly #r: Retained;
  readonly #log: Logger;
  readonly #subs = new Set<Subscriber>();
  readonly #types = new Map<string, EventTypeSpec>();
  #scheduled: NodeJS.Immediate | undefined;
  #closed = false;

  constructor(retained: Retained, log: Logger) {
    this.#r = retained;
    this.#log = log;
  }

  get boot(): string { return this.#r.boot; }
  get ring(): EventRing { return this.#r.ring; }

  emit(type: string, subject: EventSubject, payload: Record<string, unknown> = {}): void {
    try {
      const ring = this.#r.ring;
      ring.push(Object.freeze({
        id: ring.nextId(), boot: this.#r.boot, time: new Date().toISOString(), type,
        // credentials never reach a subscriber or a webhook (a URL with user info, a token in a query)
        subject: Object.freeze(maskDeep(subject)), payload: Object.freeze(maskDeep(payload)),
      }));
      if (!this.#scheduled && !this.#closed && this.#subs.size) this.#scheduled = setImmediate(this.flush);
    } catch (err) {
      this.#log.warn({ err, type }, 'cannot record event');
    }
  }

  subscribe(filter: EventFilter, fromId: string | undefined, onEvent: (e: CoreEvent) => void): EventSubscription {
    const match = compileFilter(filter);
    const ring = this.#r.ring;
    const sub: Subscriber = { match, cursor: ring.newest, onEvent, closed: false };
    if (fromId !== undefined) {
      const after = this.#resumePoint(fromId);
      if (after < ring.oldest - 1) this.#lost(sub, fromId);
      else sub.cursor = Math.min(after, ring.newest);
      this.#offer(sub);
    }
    this.#subs.add(sub);
    return { close: () => { sub.closed = true; this.#subs.delete(sub); } };
  }

  declare(specs: readonly EventTypeSpec[]): void {
    for (const s of specs) if (!this.#types.has(s.type)) this.#types.set(s.type, Object.freeze({ ...s }));
  }

  types(): EventTypeSpec[] {
    return [...this.#types.values()];
  }

  /** Delivers what is pending now (also before streams are closed at shutdown). */
  readonly flush = (): void => {
    this.#scheduled = undefined;
    for (const sub of this.#subs) this.#offer(sub);
  };

  /** No more delivery passes; pending ones run first. */
  close(): void {
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.flush();
    this.#closed = true;
    this.#subs.clear();
  }

  /** The id after which a resume starts; -1 when `fromId` is not of this run (all of it is new). */
  #resumePoint(fromId: string): number {
    const m = ID.exec(fromId.trim());
    if (!m || (m[1] !== undefined && m[1] !== this.#r.boot)) return -1;
    return Number(m[2]);
  }

  #lost(sub: Subscriber, fromId: string): void {
    const ring = this.#r.ring;
    sub.cursor = ring.oldest - 1;
    // its id is the last one gone: a client resuming from it asks for what is held, nothing older
    this.#deliver(sub, Object.freeze({
      id: ring.oldest - 1, boot: this.#r.boot, time: new Date().toISOString(), type: 'events.lost', subject: {},
      payload: { last_event_id: fromId, oldest_id: `${this.#r.boot}-${ring.oldest}` },
    }));
  }

  #offer(sub: Subscriber): void {
    const ring = this.#r.ring;
    // more events than the history holds in one tick: say so rather than skip silently
    if (sub.cursor < ring.oldest - 1) this.#lost(sub, `${this.#r.boot}-${sub.cursor}`);
    while (sub.cursor < ring.newest && !sub.closed) {
      const e = ring.get(++sub.cursor);
      if (e && sub.match(e)) this.#deliver(sub, e);
    }
  }

  #deliver(sub: Subscriber, e: CoreEvent): void {
    try {
      sub.onEvent(e);
    } catch (err) {
      this.#log.warn({ err }, 'event subscriber failed');
    }
  }
}
