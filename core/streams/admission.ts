import {
  askIngest, IngestPeerBase, tellIngest, type ingestHooksRef, type IngestPeer, type IngestRefusal, type IngestTraffic, type StreamRefusal,
} from '../../sdk/index.ts';
import { streamRefusals } from './errors.ts';

/** The ingest hooks of the app the table serves now (rebound by a reload). */
export type IngestHooks = Readonly<ReturnType<typeof ingestHooksRef.create>>;

/** What an admission reports: a tap that threw in an `on*` hook. */
export interface AdmissionLog {
  error(fields: object, msg: string): void;
}

/**
 * A client's peer as the hooks see it: the protocol's peer, its traffic counted from the last
 * announce to an app (a reload that kept the connection starts the count again for the new app).
 */
class AdmittedPeer extends IngestPeerBase {
  readonly #peer: IngestPeer;
  #base: IngestTraffic = { rxBytes: 0, txBytes: 0 };

  constructor(peer: IngestPeer) {
    super(peer);
    this.#peer = peer;
  }

  traffic(): IngestTraffic {
    const t = this.#peer.traffic();
    return { rxBytes: t.rxBytes - this.#base.rxBytes, txBytes: t.txBytes - this.#base.txBytes };
  }

  /** From now on the bytes count from here. */
  rebase(): void {
    this.#base = { ...this.#peer.traffic() };
  }
}

/**
 * The decision on a peer's `key` (`<user>:<token>` its protocol's own token did not match), the
 * one rule for every protocol: an access plugin's `decideKey` tap allows it or says why not; a
 * key nobody decides (no access plugin) is a wrong token.
 */
export function keyRefusal(hooks: IngestHooks | undefined, peer: IngestPeer, role: 'publish' | 'play'): StreamRefusal | undefined {
  if (peer.key === undefined) return undefined;
  let v: true | IngestRefusal | undefined;
  try {
    v = hooks?.decideKey.call(peer, role);
  } catch (err) {
    v = { reason: `the key check failed: ${(err as Error).message}`, kind: 'forbidden' };
  }
  return v === true ? undefined : streamRefusals.refused(v ?? { reason: 'invalid token', kind: 'unauthorized' });
}

/**
 * One client's way through the ingest hooks: the `pre*` check, `on*` once announced (again, with
 * the bytes counted from then, after a reload kept the connection), the end hook exactly once, and
 * only when an app was told. No hook for a refused peer. The hooks are looked up at each call, so
 * an end after a reload reaches the app that runs then.
 */
export class Admission {
  readonly peer: AdmittedPeer;
  readonly #role: 'publish' | 'play';
  readonly #hooks: () => IngestHooks | undefined;
  readonly #log: () => AdmissionLog | undefined;
  #announced = false;
  #ended = false;
  #keyed = false;

  constructor(role: 'publish' | 'play', peer: IngestPeer, hooks: () => IngestHooks | undefined, log: () => AdmissionLog | undefined) {
    this.#role = role;
    this.peer = new AdmittedPeer(peer);
    this.#hooks = hooks;
    this.#log = log;
  }

  /**
   * A user's key (`decideKey`), then `prePublish` / `prePlay`: a refusal (a tap's, a throwing
   * tap's, or no answer in `timeoutMs`), or undefined.
   */
  async check(timeoutMs: number | undefined): Promise<StreamRefusal | undefined> {
    const keyed = this.key();
    if (keyed) return keyed;
    const hooks = this.#hooks();
    if (!hooks) return undefined;
    const asked = askIngest(this.#role === 'publish' ? hooks.prePublish : hooks.prePlay, this.peer);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => { if (timeoutMs !== undefined) timer = setTimeout(() => resolve('late'), timeoutMs); });
    const veto = await Promise.race([asked, late]).finally(() => clearTimeout(timer));
    if (veto === 'late') return streamRefusals.refused({ reason: `the ingest checks did not answer within ${timeoutMs! / 1000} s`, kind: 'overloaded' });
    return veto ? streamRefusals.refused(veto) : undefined;
  }

  /** The peer's key (`keyRefusal`), decided once: a second call (`check` after it) finds it done. */
  key(): StreamRefusal | undefined {
    if (this.#keyed) return undefined;
    this.#keyed = true;
    return keyRefusal(this.#hooks(), this.peer, this.#role);
  }

  /** `onPublish` / `onPlay` to the current app; after the first, the bytes count from now on. */
  announce(): void {
    if (this.#ended) return;
    if (this.#announced) this.peer.rebase();
    this.#announced = true;
    const hooks = this.#hooks();
    if (hooks) tellIngest(this.#role === 'publish' ? hooks.onPublish : hooks.onPlay, this.#failed, this.peer);
  }

  /** The connection is gone: the end hook with its traffic, once, if an app was told of it. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    const hooks = this.#hooks();
    if (!this.#announced || !hooks) return;
    tellIngest(this.#role === 'publish' ? hooks.onPublishEnd : hooks.onPlayEnd, this.#failed, this.peer, this.peer.traffic());
  }

  #failed = (err: Error): void => {
    this.#log()?.error({ id: this.peer.id, protocol: this.peer.protocol, stream: this.peer.stream, err: err.message }, 'an ingest hook tap failed');
  };
}
