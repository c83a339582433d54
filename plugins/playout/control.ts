import { realpathSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import type { ApiError, ProcessesService, RunUse } from '../../sdk/index.ts';
import type { PlaylistPlayState, PlayoutService, PlayoutStatus } from './api.ts';
import { PREFIX } from './args.ts';
import { playoutErrors } from './errors.ts';
import { localFileProblem } from './playlist/local-file.ts';
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
   * the old source kept. While an access plugin decides (`may`: the caller's
   * `httpHooksRef.processUse`), a local source must be a disk file that the process's maker and the
   * caller may read, with all it leads to (`localSwitchProblem`): else 403 (400 for a form that is
   * no disk file). `caller` (under an access plugin): the relay's ffmpegs reach of the disk only
   * what both the maker and the caller reach while they read the new source (`RelayEntry.switcher`).
   */
  async switchStream(processId: string, inputId: string, url: string, may?: (use: RunUse) => boolean, caller?: { maker: string; since: number }): Promise<void> {
    const e = this.#find(processId, inputId);
    const target = url.trim();
    if (!target) throw playoutErrors.badUrl('the body must be the URL of the new stream');
    // the same form as the input address is accepted: the relay reads the URL behind the prefix
    const source = target.startsWith(PREFIX) ? target.slice(PREFIX.length) : target;
    // the rule process inputs meet (encoder.access.input): a switch is no way around it
    const denied = this.#processes.inputProblem(source);
    if (denied) throw playoutErrors.badUrl(`${source}: ${denied}`);
    if (may) {
      const fsGet = (resource: string): RunUse => ({ type: 'fs', resource, action: 'GET' });
      const refused = localSwitchProblem(source, this.#diskDir, (p) => this.#processes.makerMay(processId, fsGet(p)) && may(fsGet(p)));
      if (refused) throw refused;
    }
    const { caller: was, url: wasUrl } = e.switcher;
    const restore = () => { e.switcher.caller = was; e.switcher.url = wasUrl; };
    // only what reads the new source is narrowed (its probe run first): the old one goes on as the maker's
    e.switcher.caller = caller;
    e.switcher.url = source;
    const result = await e.relay.switchStream(source).catch((err: unknown) => {
      restore();
      return failure(err);
    });
    if (!result.ok) {
      restore();
      throw playoutErrors.mismatch(result.reason);
    }
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

/** A network URL (`rtmp://`, `srt://`, `udp://`, ...): read by the relay as before; `file://` is local. */
const NETWORK_URL = /^(?!file:)[a-z][a-z0-9+.-]*:\/\//i;

/**
 * Why a switch to `source` is refused while an access plugin decides (`may`: the process's maker's
 * and the caller's read of a disk path), or undefined. A network URL passes (its rule is
 * `encoder.access.input`); a local source must be the absolute path of a file of the disk
 * filesystem (or `file:` of one: no other protocol prefix, no relative path: ffmpeg's `concat:`,
 * `cache:`, ... would open files no check names), which both may read, with every file it leads
 * ffmpeg to (an HLS playlist's names, `local-file.ts`; other referencing formats refused).
 */
function localSwitchProblem(source: string, diskDir: string, may: (diskPath: string) => boolean): ApiError | undefined {
  if (NETWORK_URL.test(source)) return undefined;
  const path = source.replace(/^file:(\/\/)?/i, '');
  if (!isAbsolute(path)) return playoutErrors.badUrl(`${source}: a local source is the absolute path of a file of the disk filesystem (no protocol prefix, no relative path)`);
  let root: string;
  let real: string;
  try {
    root = realpathSync(diskDir);
    real = realpathSync(path);
  } catch {
    return playoutErrors.badUrl(`${source}: no such file`);
  }
  if (!real.startsWith(root + sep)) return playoutErrors.forbidden(`${source}: outside the disk filesystem`);
  const disk = `/${relative(root, real).split(sep).join('/')}`;
  if (!may(disk)) return playoutErrors.forbidden(`no policy allows GET fs ${disk} (both the process's maker and the caller need one)`);
  let refused = false;
  const why = localFileProblem(root, real, (p) => may(p) || !(refused = true));
  if (why) return refused ? playoutErrors.forbidden(`${source}: ${why}`) : playoutErrors.badUrl(`${source}: ${why}`);
  return undefined;
}
