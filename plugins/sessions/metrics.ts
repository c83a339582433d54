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

/**
 * The `session_*` figures of reference 12.4, per collector, for the metrics plugin. A collector's
 * label object is made once and kept (frozen), so the history finds its series without key text.
 */
export function sessionMetrics(registry: SessionRegistry): MetricCollector {
  const labelsOf = new Map<string, Readonly<Record<string, string>>>();
  return {
    describe: (): MetricDescription[] => NAMES.map(([name, description]) => ({ name, description, labels: ['collector'] })),
    collect: (): MetricValue[] => {
      const out: MetricValue[] = [];
      for (const name of registry.names()) {
        const c = registry.get(name)!;
        let labels = labelsOf.get(name);
        if (!labels) labelsOf.set(name, (labels = Object.freeze({ collector: name })));
        const h = c.history.totals();
        const r = c.rates();
        const values = [h.sessions, c.settings.maxSessions, c.countActive(), h.rx, h.tx, r.rx, r.tx, c.settings.maxTxBitrate, 0];
        for (let i = 0; i < NAMES.length; i++) out.push({ name: NAMES[i]![0], labels, value: values[i]! });
      }
      return out;
    },
  };
}
