import t from 'tap';
import { EXPORTS, PrometheusExport } from '../../../plugins/metrics/prometheus.ts';
import type { MetricValue } from '../../../plugins/metrics/api.ts';
import { PromClientOracle } from './fixtures/prom-client-oracle.ts';

/*
 * /metrics is written without prom-client (issue 29: its registry made about 50x the text in
 * garbage per scrape), so prom-client is the oracle here: random scrapes of every exported metric,
 * with awkward label values, repeated values, NaN, infinities and negatives, must come out byte for
 * byte as prom-client writes them, scrape counters included.
 */
const LABELS = ['eth0', '', 'a"b', 'c\\d', 'e\nf', 'ünï', 'x y'];
let seed = 29;
const rand = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const VALUES = [0, 1, 2.5, -3, NaN, Infinity, 1e21, 123456789.125];

function scrape(): MetricValue[] {
  const out: MetricValue[] = [];
  for (let i = 0; i < 60; i++) {
    const e = EXPORTS[rand(EXPORTS.length)]!;
    const labels: Record<string, string> = {};
    for (const internal of Object.values(e.labels ?? {})) if (rand(5)) labels[internal] = LABELS[rand(LABELS.length)]!;
    out.push({ name: e.from, labels, value: VALUES[rand(VALUES.length)]! });
  }
  return out;
}

t.test('the written exposition equals prom-client\'s, scrape after scrape', async (t) => {
  const help = new Map([['cpu_idle', 'idle "x" \\ y\nz'], ['net_rx', 'received bytes']]);
  const ours = new PrometheusExport('core-"1', help);
  const oracle = new PromClientOracle('core-"1', help);
  t.equal(ours.contentType, oracle.contentType);
  for (let i = 0; i < 25; i++) {
    const values = scrape();
    t.equal(await ours.render(values), await oracle.render(values), `scrape ${i}`);
    const code = i % 7 === 0 ? 500 : 200;
    ours.served(code);
    oracle.served(code);
  }
});
