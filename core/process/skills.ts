import type { Logger } from 'pino';
import type { Skills as SkillsData } from './parse/schemas.ts';
import { detectSkillsWithErrors } from './parse/skills-detect.ts';
import { parseVersion } from './parse/skills.ts';
import { directSpawn, runCollect, type Spawn } from './run-collect.ts';

/**
 * The encoder's capabilities (reference 7.10), detected when first asked for and kept for the
 * service's life (config reloads included). Nothing runs at boot: the full detection spawns the
 * encoder seven times, which would slow every start; the version alone (for stored configs) is
 * one `-version` run. Unlike the original, a missing encoder does not stop the service.
 */
export class Skills {
  readonly #binary: string;
  readonly #log: Logger;
  #skills: Promise<SkillsData | undefined> | undefined;
  #version: Promise<string> | undefined;
  #reloading: Promise<SkillsData | undefined> | undefined;
  #spawn: Spawn = directSpawn;

  private constructor(binary: string, log: Logger) {
    this.#binary = binary;
    this.#log = log;
  }

  /** The instance kept across reloads through `ctx.retain` (one per binary). */
  static retained(retain: <T>(key: string, create: () => T) => T, binary: string, log: Logger): Skills {
    return retain(`skills:${binary}`, () => new Skills(binary, log));
  }

  /** The app's confined spawn; the instance outlives a reload, so each app's engine sets its own. */
  use(spawn: Spawn): void {
    this.#spawn = spawn;
  }

  async #detect(): Promise<SkillsData | undefined> {
    const { skills, errors } = await detectSkillsWithErrors(this.#binary, { spawn: this.#spawn });
    if (errors.length) this.#log.warn({ binary: this.#binary, errors }, 'skills detection incomplete');
    if (!skills.ffmpeg.version) {
      this.#log.error({ binary: this.#binary }, 'cannot detect the encoder version; is it installed?');
      return undefined;
    }
    this.#version = Promise.resolve(skills.ffmpeg.version);
    return skills;
  }

  /** The full skills, detected on first use. */
  get(): Promise<SkillsData | undefined> {
    return (this.#skills ??= this.#detect());
  }

  /**
   * Detects again; a failed run keeps the previous result. Reloads asked while one runs share it
   * (60 at once spawned 420 encoders and took 35 s).
   */
  reload(): Promise<SkillsData | undefined> {
    return (this.#reloading ??= (async () => {
      try {
        const previous = await this.#skills;
        this.#skills = this.#detect().then((s) => s ?? previous);
        return await this.#skills;
      } finally {
        this.#reloading = undefined;
      }
    })());
  }

  /** `^<version>` as stored configs record it (reference 7.5 step 2); '' when unknown. */
  async ffversion(): Promise<string> {
    this.#version ??= runCollect(this.#spawn, this.#binary, ['-version'], 10_000).then((r) => parseVersion(r.stdout).version);
    const v = await this.#version;
    return v ? `^${v}` : '';
  }

  /** Resolves once no encoder run of ours is in flight (close waits, so none outlives the app). */
  async settled(): Promise<void> {
    await Promise.all([this.#skills, this.#version]);
  }
}
