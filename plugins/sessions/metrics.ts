import type { MetricCollector, MetricDescription, MetricValue } from '../metrics/api.ts';
import type { SessionRegistry } from './registry.ts';

const NAMES: Array<[string, string]> = [
  ['session_total', 'Historic number of sessions'],
  ['session_limit', 'Maximum number of sessions (0 = unlimited)'],
  ['session_active', 'Number of active sessions'],
  ['session_rxbytes', 'Historic received bytes'],
  ['session_txbytes', 'Historic sent bytes'],
  ['session_rxbitrate', 'Current receive bitrate in bit/s'],
  ['session_txbitrate', 'Current send bitrate in bit/s'],
  ['session_maxtxbitrate', 'Configured maximum send bitrate in bit/s'],
  ['session_maxrxbitrate', 'Maximum receive bitrate in bit/s (always 0)'],
];

/** The `session_*` figures of reference 12.4, per collector, for the metrics plugin. */
export function sessionMetrics(registry: SessionRegistry): MetricCollector {
  return {
    describe: (): MetricDescription[] => NAMES.map(([name, description]) => ({ name, description, labels: ['collector'] })),
    collect: (): MetricValue[] => registry.names().flatMap((name) => {
      const c = registry.get(name)!;
      const h = c.history.totals();
      const r = c.rates();
      const values = [h.sessions, c.settings.maxSessions, c.countActive(), h.rx, h.tx, r.rx, r.tx, c.settings.maxTxBitrate, 0];
      return NAMES.map(([n], i) => ({ name: n, labels: { collector: name }, value: values[i]! }));
    }),
  };
}
