import t from 'tap';
import { PrometheusExport } from '../../../plugins/metrics/prometheus.ts';
import type { MetricValue } from '../../../plugins/metrics/api.ts';

/*
 * Issue 29: /metrics went through prom-client's registry, which rebuilt a hash map of label
 * objects per metric per scrape (about 50x the text in garbage: the young generation grew by tens
 * of MB under a few scrapes a second). The text is now written straight from the values; these
 * pin the text prom-client wrote and that a series' label text is built once.
 */

const help = new Map([['cpu_idle', 'idle "x" \\ y\nz'], ['net_rx', 'rx']]);

t.test('the exposition text: escaping, counters summed, gauges last, label-less series always there', async (t) => {
  const prom = new PrometheusExport('core-"1', help);
  const values: MetricValue[] = [
    { name: 'uptime_uptime', labels: {}, value: 12.5 },
    { name: 'cpu_idle', labels: {}, value: NaN },
    { name: 'net_rx', labels: { interface: 'eth0' }, value: 5 },
    { name: 'net_rx', labels: { interface: 'a"b\\c\nd' }, value: 7 },
    { name: 'net_rx', labels: { interface: 'eth0' }, value: 9 },
    { name: 'ffmpeg_process', labels: { state: 'running' }, value: 3 },
    { name: 'ffmpeg_process', labels: { state: 'running' }, value: 4 },
    { name: 'ffmpeg_process', labels: { state: 'failed' }, value: -1 },
  ];
  const text = await prom.render(values);
  prom.served(200);
  const core = 'core="core-\\"1"';
  t.ok(text.startsWith(`# HELP uptime_seconds uptime_uptime\n# TYPE uptime_seconds counter\nuptime_seconds{${core}} 12.5\n\n`), 'a counter');
  t.ok(text.includes(`# HELP cpu_idle_time_percent idle "x" \\\\ y\\nz\n# TYPE cpu_idle_time_percent gauge\ncpu_idle_time_percent{${core}} 0\n\n`), 'help escaped, NaN gauge is 0');
  t.ok(text.includes(`net_rx_bytes{interface="eth0",${core}} 9\nnet_rx_bytes{interface="a\\"b\\\\c\\nd",${core}} 7\n\n`), 'gauge: the last value, first-seen order, label escaped');
  t.ok(text.includes(`ffmpeg_states_total{state="running",${core}} 7\n\n`), 'counter: summed, a negative value left out');
  t.ok(text.includes(`# TYPE mem_total_bytes gauge\nmem_total_bytes{${core}} 0\n\n`), 'a label-less gauge without values is 0');
  t.ok(text.includes('# TYPE net_tx_bytes gauge\n\n'), 'a labelled metric without values: its head only');
  t.ok(text.endsWith(`# TYPE promhttp_metric_handler_requests_total counter\n\n# HELP promhttp_metric_handler_requests_in_flight Current number of scrapes being served.\n# TYPE promhttp_metric_handler_requests_in_flight gauge\npromhttp_metric_handler_requests_in_flight{${core}} 1\n`), 'scrapes counted after, this one in flight');
  const again = await prom.render([]);
  t.ok(again.includes(`promhttp_metric_handler_requests_total{code="200",${core}} 1\n`), 'the served scrape');
  t.equal(prom.contentType, 'text/plain; version=0.0.4; charset=utf-8');
});

t.test('a frozen labels object (the collectors keep one per series) has its label text built once', async (t) => {
  const prom = new PrometheusExport('c', help);
  let reads = 0;
  const labels = new Proxy(Object.freeze({ interface: 'eth0' }), {
    get(target, key) {
      reads++;
      return Reflect.get(target, key);
    },
  });
  const values: MetricValue[] = [{ name: 'net_rx', labels, value: 1 }];
  const first = await prom.render(values);
  t.ok(reads > 0, 'read at the first scrape');
  const after = reads;
  for (let i = 0; i < 5; i++) t.equal(await prom.render(values), first, 'the same text');
  t.equal(reads, after, 'later scrapes reuse the text');
});
