import { realpathSync } from 'node:fs';
import { isAbsolute, posix, relative, resolve } from 'node:path';
import type { ProcessesService, RunUse } from '../../sdk/index.ts';
import type { PlaylistPlayState, PlayoutService, PlayoutStatus } from './api.ts';
import { PREFIX } from './args.ts';
import { playoutErrors } from './errors.ts';
import { relayKey, type RelayEntry } from './relays.ts';
import type { RelayRegistry } from './service.ts';

/**
 * The playout operations of the API (reference 4.5) on the running relays: what `playoutRef`
 * provides (status for GraphQL) and what the routes call. Every miss is the reference's 404
 * `Unknown process or input` with the reason; no HTTP here.
 */
export class PlayoutControl implements PlayoutService {
  readonly #relays: RelayRegistry;
  readonly #processes: ProcessesService;
  readonly #frames: Map<string, Buffer>;
  readonly #diskDir: string;

  /** `diskDir`: `storage.disk.dir`, where a switch to a local file is read as a disk path. */
  constructor(relays: RelayRegistry, processes: ProcessesService, frames: Map<string, Buffer>, diskDir = '') {
    this.#relays = relays;
    this.#processes = processes;
    this.#frames = frames;
    this.#diskDir = diskDir;
  }

  /** Throws the 404 unless the input has a running relay (before a request body is read). */
  check(processId: string, inputId: string): void {
    this.#find(processId, inputId);
  }

  async status(processId: string, inputId: string): Promise<PlayoutStatus> {
    return this.#find(processId, inputId).relay.status();
  }

  playlist(processId: string, inputId: string): PlaylistPlayState | null {
    return this.#relays.get(processId, inputId)?.relay.playlist() ?? null;
  }

  reopen(processId: string, inputId: string): void {
    this.#find(processId, inputId).relay.reopen();
  }

  async keyframe(processId: string, inputId: string, kind: 'jpg' | 'png'): Promise<Buffer> {
    const image = await this.#find(processId, inputId).relay.keyframe(kind).catch(failure);
    if (!image) throw playoutErrors.noKeyframe();
    return image;
  }

  /** Sets the error frame (kept for later relays of this input); an image ffmpeg cannot decode is a 400. */
  async setErrorframe(processId: string, inputId: string, image: Buffer): Promise<void> {
    const e = this.#find(processId, inputId);
    if (image.length === 0) throw playoutErrors.badImage('the request body is empty: send the image bytes');
    await e.relay.setErrorframe(image).catch(failure);
    this.#frames.set(relayKey(processId, inputId), image);
  }

  async encodeErrorframe(processId: string, inputId: string): Promise<void> {
    await this.#find(processId, inputId).relay.encodeErrorframe().catch(failure);
  }

  /**
   * Switches the source to `url` when its stream parameters match; otherwise 400 with the reason,
   * the old source kept. A local file needs a `GET` of it by the process's maker and by the caller
   * (`may`: the route's `httpHooksRef.processUse`), as the process's own inputs do: else 403.
   */
  async switchStream(processId: string, inputId: string, url: string, may?: (use: RunUse) => boolean): Promise<void> {
    const e = this.#find(processId, inputId);
    const target = url.trim();
    if (!target) throw playoutErrors.badUrl('the body must be the URL of the new stream');
    // the same form as the input address is accepted: the relay reads the URL behind the prefix
    const source = target.startsWith(PREFIX) ? target.slice(PREFIX.length) : target;
    // the rule process inputs meet (encoder.access.input): a switch is no way around it
    const denied = this.#processes.inputProblem(source);
    if (denied) throw playoutErrors.badUrl(`${source}: ${denied}`);
    const use = localUse(source, this.#diskDir);
    if (use && (!this.#processes.makerMay(processId, use) || (may && !may(use)))) {
      throw playoutErrors.forbidden(`no policy allows GET fs ${use.resource.slice(0, 200)} (both the process's maker and the caller need one)`);
    }
    const result = await e.relay.switchStream(source).catch(failure);
    if (!result.ok) throw playoutErrors.mismatch(result.reason);
  }

  #find(processId: string, inputId: string): RelayEntry {
    if (!this.#relays.enabled) throw playoutErrors.unknown('playout is not enabled (playout.enable)');
    const info = this.#processes.get(processId);
    if (!info) throw playoutErrors.unknown(`process '${processId}' does not exist`);
    const input = info.inputs.find((i) => i.id === inputId);
    if (!input) throw playoutErrors.unknown(`process '${processId}' has no input '${inputId}'`);
    const entry = this.#relays.get(processId, inputId);
    if (entry) return entry;
    if (!input.address.startsWith(PREFIX)) throw playoutErrors.unknown(`input '${inputId}' of process '${processId}' has no playout`);
    throw playoutErrors.unknown(`the playout of input '${inputId}' is not running (process '${processId}' is not running)`);
  }
}

/** A relay's error as the API's: its codes (relay/errors.ts) to statuses, anything else a 500. */
function failure(err: unknown): never {
  const { code, message } = err as { code?: string; message?: string };
  if (code === 'bad_image') throw playoutErrors.badImage(message ?? 'the image does not decode');
  if (code === 'stopped') throw playoutErrors.unknown('the playout relay stopped (its process is stopping)');
  throw playoutErrors.internal(message ?? String(err));
}

/** A local source (a path, `file:<path>`) as the `fs` read it is: its disk path inside the disk folder, else its real path (no policy names it); undefined for a URL. */
function localUse(source: string, diskDir: string): RunUse | undefined {
  const path = source.replace(/^file:/i, '');
  if (/^[a-z][a-z0-9+.-]*:/i.test(path) || path === '-') return undefined;
  const real = (p: string) => { try { return realpathSync(p); } catch { return resolve(p); } };
  const abs = real(path);
  const rel = diskDir ? relative(real(diskDir), abs) : '..';
  const resource = rel.startsWith('..') || isAbsolute(rel) ? abs : posix.normalize(`/${rel.split('\\').join('/')}`);
  return { type: 'fs', resource, action: 'GET' };
}
