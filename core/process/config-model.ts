import { shortId as newShortId } from '../../sdk/index.ts';
import type { ProcessConfig } from './schema.ts';

/*
 * A process config with every field filled in (what the engine works with), and its two
 * outside forms: the API's ProcessConfig (reference 5.4) and db.json's stored form (10.1).
 */

export interface CleanupRule {
  pattern: string;
  max_files: number;
  max_file_age_seconds: number;
  purge_on_delete: boolean;
}

export interface IOConfig {
  id: string;
  address: string;
  options: string[];
  cleanup: CleanupRule[];
}

export interface FullConfig {
  id: string;
  type: string;
  reference: string;
  input: IOConfig[];
  output: IOConfig[];
  options: string[];
  reconnect: boolean;
  reconnect_delay_seconds: number;
  autostart: boolean;
  stale_timeout_seconds: number;
  limits: { cpu_usage: number; memory_mbytes: number; waitfor_seconds: number };
  /** A 5-field cron expression (UTC) or an RFC 3339 instant; '' = not scheduled (schedule.ts). */
  scheduler: string;
  /** Stop a run after this long; 0 = no limit. */
  runtime_duration_seconds: number;
  /** Run only while read (demand-runner.ts); idle_seconds 0 = the engine's default. */
  ondemand: { enable: boolean; idle_seconds: number };
  /** Who the process belongs to and its domain (the successor's IAM scopes); '' = none (`$none`). */
  owner: string;
  domain: string;
}

export const DEFAULT_TYPE = 'encoder';
export const PROCESS_TYPES = ['encoder', 'ffmpeg'];

/** A random 22-character short UUID (base57), as datarhei Core generates IDs. */
export const shortId = newShortId;

const str = (v: unknown, d = ''): string => (typeof v === 'string' ? v : d);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function cleanupOf(v: unknown): CleanupRule[] {
  if (!Array.isArray(v)) return [];
  return v.filter((c) => c && typeof c === 'object').map((c: Record<string, unknown>) => ({
    pattern: str(c.pattern),
    max_files: num(c.max_files),
    max_file_age_seconds: num(c.max_file_age_seconds),
    purge_on_delete: c.purge_on_delete === true,
  }));
}

function ioOf(v: unknown, output: boolean, used: Set<string>): IOConfig[] {
  if (!Array.isArray(v)) return [];
  return v.map((x: Record<string, unknown> | null) => {
    const o = x && typeof x === 'object' ? x : {};
    // only a missing or empty ID is generated; a blank one is refused by validation
    let id = str(o.id);
    if (id === '') {
      do id = shortId(); while (used.has(id));
    }
    used.add(id);
    return { id, address: str(o.address), options: strs(o.options), cleanup: output ? cleanupOf(o.cleanup) : [] };
  });
}

/**
 * Fills defaults into a validated request body (or a stored config): the process ID is trimmed,
 * empty input/output IDs get a fresh short UUID. Tolerant of junk, so it also reads old db.json files.
 */
export function normalize(body: Partial<ProcessConfig> | Record<string, unknown>): FullConfig {
  const b = body as Record<string, unknown>;
  const limits = (b.limits && typeof b.limits === 'object' ? b.limits : {}) as Record<string, unknown>;
  return {
    id: str(b.id).trim(),
    type: str(b.type, DEFAULT_TYPE) || DEFAULT_TYPE,
    reference: str(b.reference),
    input: ioOf(b.input, false, new Set(strs((b.input as unknown[] | undefined)?.map((i) => (i as { id?: unknown })?.id)))),
    output: ioOf(b.output, true, new Set(strs((b.output as unknown[] | undefined)?.map((i) => (i as { id?: unknown })?.id)))),
    options: strs(b.options),
    reconnect: b.reconnect === true,
    reconnect_delay_seconds: num(b.reconnect_delay_seconds),
    autostart: b.autostart === true,
    stale_timeout_seconds: num(b.stale_timeout_seconds),
    limits: { cpu_usage: num(limits.cpu_usage), memory_mbytes: Math.floor(num(limits.memory_mbytes)), waitfor_seconds: num(limits.waitfor_seconds) },
    scheduler: str(b.scheduler).trim(),
    runtime_duration_seconds: Math.floor(num(b.runtime_duration_seconds)),
    ondemand: ondemandOf(b.ondemand),
    owner: str(b.owner).trim(),
    domain: str(b.domain).trim(),
  };
}

function ondemandOf(v: unknown): FullConfig['ondemand'] {
  const o = (v && typeof v === 'object' ? v : {}) as Record<string, unknown>;
  return { enable: o.enable === true, idle_seconds: Math.floor(num(o.idle_seconds)) };
}

type OptionalFields = { scheduler?: string; runtime_duration_seconds?: number; ondemand?: FullConfig['ondemand']; owner?: string; domain?: string };

/** The scheduler, on-demand and IAM fields, only when set (a config without them reads as the reference v16's). */
function scheduleFields(c: FullConfig): OptionalFields {
  const out: OptionalFields = {};
  if (c.scheduler) out.scheduler = c.scheduler;
  if (c.runtime_duration_seconds) out.runtime_duration_seconds = c.runtime_duration_seconds;
  if (c.ondemand.enable || c.ondemand.idle_seconds) out.ondemand = { ...c.ondemand };
  if (c.owner) out.owner = c.owner;
  if (c.domain) out.domain = c.domain;
  return out;
}

/** The API form: input cleanup never shown, output cleanup only when there is some. */
export function toApiConfig(c: FullConfig): ProcessConfig {
  const io = (x: IOConfig, out: boolean) => (out && x.cleanup.length
    ? { id: x.id, address: x.address, options: x.options, cleanup: x.cleanup }
    : { id: x.id, address: x.address, options: x.options });
  return {
    id: c.id,
    type: c.type,
    reference: c.reference,
    input: c.input.map((x) => io(x, false)),
    output: c.output.map((x) => io(x, true)),
    options: c.options,
    reconnect: c.reconnect,
    reconnect_delay_seconds: c.reconnect_delay_seconds,
    autostart: c.autostart,
    stale_timeout_seconds: c.stale_timeout_seconds,
    limits: { ...c.limits },
    ...scheduleFields(c),
  };
}

/** db.json's form (reference 10.1): limits flattened, memory in bytes, plus `type` and `ffversion`. */
export function toStoredConfig(c: FullConfig, ffversion: string): Record<string, unknown> {
  return {
    id: c.id,
    type: c.type,
    reference: c.reference,
    ffversion,
    input: c.input.map((x) => ({ id: x.id, address: x.address, options: x.options, cleanup: [] })),
    output: c.output.map((x) => ({ id: x.id, address: x.address, options: x.options, cleanup: x.cleanup })),
    options: c.options,
    reconnect: c.reconnect,
    reconnect_delay_seconds: c.reconnect_delay_seconds,
    autostart: c.autostart,
    stale_timeout_seconds: c.stale_timeout_seconds,
    limit_cpu_usage: c.limits.cpu_usage,
    limit_memory_bytes: c.limits.memory_mbytes * 1024 * 1024,
    limit_waitfor_seconds: c.limits.waitfor_seconds,
    ...scheduleFields(c),
  };
}

/** Reads a stored config back; missing fields take their defaults. */
export function fromStoredConfig(s: Record<string, unknown>): FullConfig {
  const c = normalize({
    ...s,
    limits: {
      cpu_usage: s.limit_cpu_usage,
      memory_mbytes: num(s.limit_memory_bytes) / (1024 * 1024),
      waitfor_seconds: s.limit_waitfor_seconds,
    },
  });
  return c;
}

/**
 * PUT decodes the body on top of the current config (reference 4.4.4): absent fields keep their
 * value, arrays take the body's length but merge their elements index by index.
 */
export function mergeOnto(current: unknown, body: unknown): unknown {
  if (Array.isArray(body)) {
    const prev = Array.isArray(current) ? current : [];
    return body.map((v, i) => mergeOnto(prev[i], v));
  }
  if (body && typeof body === 'object') {
    if (!current || typeof current !== 'object' || Array.isArray(current)) return body;
    const out: Record<string, unknown> = { ...(current as Record<string, unknown>) };
    for (const [k, v] of Object.entries(body)) out[k] = mergeOnto(out[k], v);
    return out;
  }
  return body;
}
