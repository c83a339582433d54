import { SessionSchema } from './api.ts';
import { Bool, ConfigErrorList, type ConfigErrors, Int, List, MAX_TIMER_SECONDS, section, type Static, Type, validCidr } from '../../sdk/index.ts';

/** The `sessions` section of the configuration, owned by this plugin. */
export const SessionsConfig = section({
  enable: [Bool(true), 'Track viewer and publisher sessions (plugin `sessions`).'],
  ip_ignorelist: [List(['127.0.0.1/32', '::1/128']), 'CIDRs whose sessions are not counted.'],
  session_timeout_sec: [Int(30, { maximum: MAX_TIMER_SECONDS }), 'Seconds without traffic after which a session ends.'],
  persist: [Bool(false), 'Keep session totals across restarts.'],
  // a timer: node runs a longer one at once, every millisecond
  persist_interval_sec: [Int(300, { maximum: MAX_TIMER_SECONDS }), 'Seconds between writes of session totals (0 = only at stop).'],
  max_bitrate_mbit: [Int(0), 'Refuse new sessions above this total bitrate (0 = unlimited).'],
  max_sessions: [Int(0), 'Refuse new sessions above this count (0 = unlimited).'],
});
export type SessionsConfig = Static<typeof SessionsConfig>;

/** Rules a schema cannot state; keys relative to `sessions`. */
export function validateSessions(s: SessionsConfig): ConfigErrors {
  const errs = new ConfigErrorList();
  if (s.session_timeout_sec < 1) errs.add('session_timeout_sec', 'must be at least 1');
  for (const key of ['persist_interval_sec', 'max_sessions', 'max_bitrate_mbit'] as const) if (s[key] < 0) errs.add(key, 'must not be negative');
  for (const ip of s.ip_ignorelist) {
    if (!validCidr(ip)) errs.add('ip_ignorelist', `'${ip}' is not a valid CIDR`);
  }
  return errs.map;
}

/** `?collectors=hls,rtmp` (reference 4.11). */
export const CollectorsQuery = Type.Object({ collectors: Type.Optional(Type.String()) });

const Traffic = { sessions: Type.Integer(), traffic_rx_mb: Type.Integer(), traffic_tx_mb: Type.Integer() };
const TrafficSchema = Type.Object(Traffic);

/** `SessionSummary` of one collector (reference 5.14). */
export const SessionSummarySchema = Type.Object({
  active: Type.Object({
    list: Type.Array(SessionSchema), sessions: Type.Integer(), bandwidth_rx_mbit: Type.Number(), bandwidth_tx_mbit: Type.Number(),
    max_sessions: Type.Integer(), max_bandwidth_rx_mbit: Type.Number(), max_bandwidth_tx_mbit: Type.Number(),
  }),
  summary: Type.Object({
    remote: Type.Record(Type.String(), Type.Object({ ...Traffic, local: Type.Record(Type.String(), TrafficSchema) })),
    local: Type.Record(Type.String(), TrafficSchema),
    reference: Type.Record(Type.String(), TrafficSchema),
    ...Traffic,
  }),
});
export type SessionSummary = Static<typeof SessionSummarySchema>;

export const SessionsSummarySchema = Type.Record(Type.String(), SessionSummarySchema);
export const SessionsActiveSchema = Type.Record(Type.String(), Type.Array(SessionSchema));
