import { createServiceRef } from './refs.ts';

/*
 * Events: what operators react to (a process failed, a publisher left, a filesystem is full), as
 * one stream with ids. The provider of `eventsRef` keeps a bounded history and hands it to
 * subscribers. Emitters depend on `optional(eventsRef)`, so they work without a provider:
 * `ctx.deps.events?.emit(...)`. Each emitter declares the types it emits in its definition
 * (`definePlugin({ events: [...] })`); the catalogue is made from those declarations.
 *
 * Ids: `id` counts from 1 per run of the program (a config reload keeps counting, the history
 * survives it); `boot` names the run. The SSE `id:` line is `<boot>-<id>`: a client that resumes
 * with an id of another run (the service restarted) first gets an `events.lost` event, then the
 * whole history of the new run.
 */

/** What an event is about: the process, the stream, the filesystem, ... (string values). */
export type EventSubject = Readonly<Record<string, string>>;

/** One event as subscribers and webhooks receive it (the JSON of an SSE `data:` line). */
export interface CoreEvent {
  /** Monotonic within `boot`, from 1. */
  readonly id: number;
  /** The run of the program the id belongs to (base-36 start time). */
  readonly boot: string;
  /** ISO 8601 time of the emit. */
  readonly time: string;
  /** Dotted name, e.g. `process.state`; see the catalogue in CONTRIBUTING.md. */
  readonly type: string;
  readonly subject: EventSubject;
  /** Small JSON object: a few scalars, never logs or media. */
  readonly payload: Readonly<Record<string, unknown>>;
}

/**
 * An event type as its emitter declares it (`definePlugin({ events: [...] })`): the catalogue
 * (`GET /api/v3/events/types`) is made from these, each listed under its plugin's name.
 *
 * @example
 * events: [{ type: 'vendor.overheat', description: 'The card is too hot.', subject: ['card'], payload: { celsius: 'temperature' } }],
 */
export interface EventTypeDeclaration {
  /** Dotted, lower case, e.g. `vendor.transcoder.overheat`. */
  readonly type: string;
  /** One sentence: when it is emitted. */
  readonly description: string;
  /** Subject keys it carries. */
  readonly subject: readonly string[];
  /** Payload fields and what they mean. */
  readonly payload: Readonly<Record<string, string>>;
}

/** An event type of the catalogue: its declaration and who emits it. */
export interface EventTypeSpec extends EventTypeDeclaration {
  /** Who emits it (the plugin names, `, `-separated when several declared it). */
  readonly emitter: string;
}

/**
 * Which events a subscriber wants: globs (`*` matches anything, also `.` and `/`; `?`, `[..]`,
 * `{a,b}`) over the type, and over subject values (`process:cam-*` matches the `process` key,
 * a glob without `key:` any value). Empty lists match everything.
 */
export interface EventFilter {
  readonly types?: readonly string[];
  readonly subjects?: readonly string[];
}

/** A live subscription; `close()` is idempotent. */
export interface EventSubscription {
  close(): void;
}

/**
 * The event bus (one provider, optional: without one nothing is recorded).
 *
 * @example
 * events: [{ type: 'vendor.overheat', description: 'The card is too hot.', subject: ['card'], payload: { celsius: 'temperature' } }],
 * deps: { events: optional(eventsRef) },
 * setup(ctx) {
 *   ctx.deps.events?.emit('vendor.overheat', { card: '0' }, { celsius: 91 });
 * }
 */
export interface EventsService {
  /**
   * Records an event and hands it to subscribers later (never in the caller's stack). Cheap,
   * synchronous, never throws: call it from hot paths.
   */
  emit(type: string, subject: EventSubject, payload?: Record<string, unknown>): void;
  /**
   * Calls `onEvent` for every matching event after `fromId` (a `Last-Event-ID`: `<boot>-<id>`, or
   * `<id>` of this run; replayed from the history first), then for new ones, in id order, each
   * once. When events after `fromId` are no longer held, a synthetic `events.lost` event comes
   * first. `fromId` undefined: new events only. Throws an `ApiError` (400) on a malformed filter.
   */
  subscribe(filter: EventFilter, fromId: string | undefined, onEvent: (e: CoreEvent) => void): EventSubscription;
  /**
   * Adds types to the catalogue (`GET /api/v3/events/types`); a type declared twice keeps the
   * first. The core declares the `events` of every plugin definition when the bus is provided;
   * call it only for types known at run time.
   */
  declare(specs: readonly EventTypeSpec[]): void;
  /** Every declared type. */
  types(): EventTypeSpec[];
}

/**
 * The event bus's ref (single provider, absent when no plugin provides it: depend on it with `optional`).
 *
 * @example
 * deps: { events: optional(eventsRef) } // ctx.deps.events is undefined without a provider
 */
export const eventsRef = createServiceRef<EventsService>('events');

/** What a filesystem plugin reports: refused writes (507) and purges (declare `fs.full` and `fs.purge` in its `events`). */
export interface FilesystemEvents {
  /** A write was refused; a 507 emits `fs.full` unless the last write was refused too. */
  refused(path: string, err: unknown): void;
  /** A write succeeded (the next 507 is news again). */
  written(): void;
  /** Files were dropped to make room for `path`. */
  purged(path: string, files: number, bytes: number): void;
}

/**
 * `fs.full` (edge-triggered: once per run of refusals) and `fs.purge` for one filesystem; every
 * call is a no-op without an events provider.
 *
 * @example
 * const fsEvents = filesystemEvents(ctx.deps.events, 'mem');
 * try { await write(); fsEvents.written(); } catch (err) { fsEvents.refused(path, err); throw err; }
 */
export function filesystemEvents(events: EventsService | undefined, filesystem: string): FilesystemEvents {
  let full = false;
  return {
    refused(path, err) {
      const e = err as { status?: unknown; errorCode?: unknown };
      if (!events || full || e?.status !== 507) return;
      full = true;
      events.emit('fs.full', { filesystem, path }, { code: String(e.errorCode ?? 'HTTP_507') });
    },
    written() {
      full = false;
    },
    purged(path, files, bytes) {
      if (files > 0) events?.emit('fs.purge', { filesystem, path }, { files, bytes });
    },
  };
}
