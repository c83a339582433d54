import type { EventsConfig } from '../../sdk/index.ts';
import type { EventBus } from './bus.ts';
import { WebhookTarget, type WebhookState } from './webhook.ts';

/** Where each target's successor resumes after a config reload, keyed by target (`ctx.retain`). */
export type ResumePoints = Map<string, number>;

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
      const target = new WebhookTarget({
        url: w.url, secret: w.secret, queue: cfg.webhook_queue,
        retryMs: cfg.webhook_retry_seconds * 1000, timeoutMs: cfg.webhook_timeout_seconds * 1000,
      });
      const from = resume.get(key);
      const sub = bus.subscribe({ types: w.types, subjects: w.subjects }, from === undefined ? undefined : `${bus.boot}-${from}`, (e) => target.enqueue(e));
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
      this.#resume.set(w.key, pending === undefined ? this.#bus.ring.newest : pending - 1);
      w.target.close();
    }
  }
}
