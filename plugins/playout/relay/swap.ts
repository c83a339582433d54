// A stream switch (`PUT .../stream`): a second source run on the new URL is probed; its parameters must
// match the current ones (else it is refused with the reason and the old source kept); once it delivers
// a keyframe the relay splices over to it. This keeps the switch's state and the status's `swap` part.
import type { PlayoutStatusSwap } from '../api.ts';
import type { SourceRun } from './source.ts';

export type SwitchResult = { ok: true } | { ok: false; reason: string };

/** How long a switch target may take to show matching parameters and a keyframe. */
const SWITCH_TIMEOUT_MS = 15_000;

export class SwapState {
  /** The run being probed, while a switch is pending. */
  run: SourceRun | undefined;
  #url = '';
  #status = 'idle';
  #lasturl = '';
  #lasterror = '';
  #pending = '';
  #matched = false;
  #deadline = 0;
  #resolve: ((r: SwitchResult) => void) | undefined;
  #killing: Promise<void> = Promise.resolve();

  constructor(url: string) {
    this.#url = url;
  }

  begin(url: string, currentUrl: string, start: () => SourceRun): Promise<SwitchResult> {
    if (this.run) return Promise.resolve({ ok: false, reason: 'a stream switch is already in progress' });
    this.#status = 'probing';
    this.#pending = url;
    this.#lasturl = currentUrl;
    this.#matched = false;
    this.#deadline = Date.now() + SWITCH_TIMEOUT_MS;
    return new Promise((resolve) => {
      this.#resolve = resolve;
      this.run = start();
    });
  }

  /** The target's parameters are known: `mismatch` is why it cannot replace the source, or null. */
  probed(mismatch: string | null): void {
    if (mismatch) this.#fail(mismatch);
    else this.#matched = true;
  }

  /** Learns the target's tables; the index of its first keyframe once it matched, else -1. */
  observe(packets: Buffer[]): number {
    const input = this.run!.input;
    for (let i = 0; i < packets.length; i++) {
      const p = packets[i]!;
      if (input.observeTables(p)) continue;
      if (this.#matched && input.ready && input.isKeyframe(p)) return i;
    }
    return -1;
  }

  /** The relay spliced over to the target. */
  done(): void {
    this.#status = 'switched';
    this.#url = this.#pending;
    this.#lasterror = '';
    this.run = undefined;
    this.#resolve?.({ ok: true });
    this.#resolve = undefined;
  }

  ended(lastLine: string): void {
    this.#fail(`source ended: ${lastLine}`);
  }

  tick(now: number): void {
    if (this.run && now > this.#deadline) this.#fail(`no matching stream within ${SWITCH_TIMEOUT_MS / 1000} s`);
  }

  /** Abandons a pending switch; resolves once its run is gone. */
  cancel(reason: string): Promise<void> {
    if (this.run) this.#fail(reason);
    return this.#killing;
  }

  #fail(reason: string): void {
    const run = this.run;
    this.run = undefined;
    this.#status = 'failed';
    this.#lasterror = reason;
    if (run) this.#killing = run.kill();
    this.#resolve?.({ ok: false, reason });
    this.#resolve = undefined;
  }

  status(): PlayoutStatusSwap {
    return { url: this.#url, status: this.#status, lasturl: this.#lasturl, lasterror: this.#lasterror };
  }
}
