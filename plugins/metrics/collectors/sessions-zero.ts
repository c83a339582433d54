import type { MetricCollector, MetricDescription, MetricValue } from '../api.ts';

/** The `session_*` names of reference 12.4, all labelled by `collector`. */
export const SESSION_METRICS: readonly MetricDescription[] = [
  { name: 'session_total', description: 'Total sessions', labels: ['collector'] },
  { name: 'session_limit', description: 'Max. number of concurrent sessions', labels: ['collector'] },
  { name: 'session_active', description: 'Number of current sessions', labels: ['collector'] },
  { name: 'session_rxbytes', description: 'Number of received bytes', labels: ['collector'] },
  { name: 'session_txbytes', description: 'Number of transmitted bytes', labels: ['collector'] },
  { name: 'session_rxbitrate', description: 'Current receiving bitrate in bit per second', labels: ['collector'] },
  { name: 'session_txbitrate', description: 'Current transmitting bitrate in bit per second', labels: ['collector'] },
  { name: 'session_maxrxbitrate', description: 'Max. allowed receiving bitrate in bit per second', labels: ['collector'] },
  { name: 'session_maxtxbitrate', description: 'Max. allowed transmitting bitrate in bit per second', labels: ['collector'] },
];

/** The collectors of reference 12.1 that clients look for (restreamer-ui reads `hls`). */
const COLLECTORS = ['ffmpeg', 'hls', 'hlsingress', 'http', 'rtmp', 'srt'];

/**
 * Zeros for every `session_*` name, used only when no plugin contributes sessions: a client
 * that reads `session_active{collector="hls"}` gets 0 instead of nothing (issue 14, slim). Built
 * once: the values never change.
 */
export function zeroSessionsCollector(): MetricCollector {
  const values: MetricValue[] = [];
  for (const collector of COLLECTORS) {
    const labels = Object.freeze({ collector });
    for (const d of SESSION_METRICS) values.push(Object.freeze({ name: d.name, labels, value: 0 }));
  }
  return { describe: () => SESSION_METRICS, collect: () => values };
}
