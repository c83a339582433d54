import type { EventsConfig } from './schema.ts';
import type { EventBus } from './bus.ts';
import { WebhookTarget, type WebhookCounters, type WebhookState } from './webhook.ts';

/**
 * Where each target's successor resumes after a config reload, and the counters it goes on from,
 * keyed by target (`ctx.retain`).
 */
export type ResumePoints = Map<string, { from: number; counters: WebhookCounters }>;

interface Wired {
  key: string;
  types: readonly string[];
  subjects: readonly string[];
  target: WebhookTarget;
  close(): void;
}

/**
 * The configured webhook targets, each subscribed to the bus with its filter. A reload hands each
 * target's unsent events to its successor (same URL, filters and secret) through the history,
 * so the events of a stop and a reload are delivered by the new app.
 */
export class Webhooks {
  readonly #wired: Wired[];
  readonly #bus: EventBus;
  readonly #resume: ResumePoints;

  constructor(cfg: EventsConfig, bus: EventBus, resume: ResumePoints) {
    this.#bus = bus;
    this.#resume = resume;
    this.#wired = cfg.webhooks.map((hook) => {
      const w = { url: hook.url, types: hook.types ?? [], subjects: hook.subjects ?? [], secret: hook.secret ?? '' };
      const key = JSON.stringify([w.url, w.types, w.subjects, w.secret]);
      const resumed = resume.get(key);
      const target = new WebhookTarget({
        url: w.url, secret: w.secret, queue: cfg.webhook_queue,
        retryMs: cfg.webhook_retry_seconds * 1000, timeoutMs: cfg.webhook_timeout_seconds * 1000,
        counters: resumed?.counters,
      });
      const sub = bus.subscribe({ types: w.types, subjects: w.subjects }, resumed === undefined ? undefined : `${bus.boot}-${resumed.from}`, (e) => target.enqueue(e));
      return { key, types: w.types, subjects: w.subjects, target, close: () => sub.close() };
    });
  }

  /** Delivery state per target, in config order. */
  states(): (WebhookState & { types: string[]; subjects: string[] })[] {
    return this.#wired.map((w) => ({ ...w.target.state, types: [...w.types], subjects: [...w.subjects] }));
  }

  /** After the bus's last pass: records resume points, stops the targets. */
  close(): void {
    this.#resume.clear();
    for (const w of this.#wired) {
      w.close();
      const pending = w.target.firstPending();
      const { delivered, failed, dropped, last_status, last_error } = w.target.state;
      this.#resume.set(w.key, { from: pending === undefined ? this.#bus.ring.newest : pending - 1, counters: { delivered, failed, dropped, last_status, last_error } });
      w.target.close();
    }
  }
}
