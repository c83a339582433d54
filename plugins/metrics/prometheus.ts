import { Counter, Gauge, Registry } from 'prom-client';
import type { MetricValue } from '../../sdk/index.ts';

/** One exported metric: its internal source and how its labels are renamed (reference 12.5). */
interface Export {
  prom: string;
  from: string;
  counter?: boolean;
  /** Prometheus label name -> internal label name. */
  labels?: Record<string, string>;
}

const L = (...names: string[]) => Object.fromEntries(names.map((n) => [n, n]));
const PROC = { process: 'processid' };

const EXPORTS: readonly Export[] = [
  { prom: 'uptime_seconds', from: 'uptime_uptime', counter: true },
  { prom: 'cpu_system_time_percent', from: 'cpu_system' },
  { prom: 'cpu_user_time_percent', from: 'cpu_user' },
  { prom: 'cpu_idle_time_percent', from: 'cpu_idle' },
  { prom: 'cpu_other_time_percent', from: 'cpu_other' },
  { prom: 'mem_total_bytes', from: 'mem_total' },
  { prom: 'mem_free_bytes', from: 'mem_free' },
  { prom: 'net_rx_bytes', from: 'net_rx', labels: L('interface') },
  { prom: 'net_tx_bytes', from: 'net_tx', labels: L('interface') },
  { prom: 'disk_total_bytes', from: 'disk_total', labels: L('path') },
  { prom: 'disk_usage_bytes', from: 'disk_usage', labels: L('path') },
  { prom: 'filesystem_limit_bytes', from: 'filesystem_limit', labels: L('name') },
  { prom: 'filesystem_usage_bytes', from: 'filesystem_usage', labels: L('name') },
  { prom: 'filesystem_files', from: 'filesystem_files', labels: L('name') },
  { prom: 'ffmpeg_process', from: 'restream_process', labels: { ...PROC, ...L('state', 'order', 'name') } },
  { prom: 'ffmpeg_process_states', from: 'restream_process_states', labels: { ...PROC, ...L('state') } },
  { prom: 'ffmpeg_process_io', from: 'restream_io', labels: { ...PROC, ...L('type', 'id', 'index', 'stream', 'media', 'name') } },
  { prom: 'ffmpeg_states', from: 'restream_state', labels: L('state') },
  { prom: 'ffmpeg_states_total', from: 'ffmpeg_process', counter: true, labels: L('state') },
  { prom: 'session_total', from: 'session_total', counter: true, labels: L('collector') },
  { prom: 'session_active', from: 'session_active', labels: L('collector') },
  { prom: 'session_rx_bytes', from: 'session_rxbytes', counter: true, labels: L('collector') },
  { prom: 'session_tx_bytes', from: 'session_txbytes', counter: true, labels: L('collector') },
];

/**
 * `/metrics`: a private prom-client Registry per app (never the global one), every series
 * labelled `core=<config.id>`. A scrape collects once and every exported metric reads its
 * values from that snapshot.
 */
export class PrometheusExport {
  readonly #registry = new Registry();
  readonly #requests: Counter<'code'>;
  readonly #inFlight: Gauge;
  #snapshot = new Map<string, MetricValue[]>();

  /** `help`: the descriptions of the internal names, for the HELP lines. */
  constructor(coreId: string, help: ReadonlyMap<string, string>) {
    this.#registry.setDefaultLabels({ core: coreId });
    for (const e of EXPORTS) this.#define(e, help.get(e.from) || e.from);
    this.#requests = new Counter({ name: 'promhttp_metric_handler_requests_total', help: 'Total number of scrapes by HTTP status code.', labelNames: ['code'], registers: [this.#registry] });
    this.#inFlight = new Gauge({ name: 'promhttp_metric_handler_requests_in_flight', help: 'Current number of scrapes being served.', registers: [this.#registry] });
  }

  get contentType(): string {
    return this.#registry.contentType;
  }

  /** The text of one scrape from the values collected for it; the scrape itself is counted after, as promhttp does. */
  async render(values: readonly MetricValue[]): Promise<string> {
    this.#inFlight.inc();
    try {
      const byName = new Map<string, MetricValue[]>();
      for (const v of values) {
        let list = byName.get(v.name);
        if (!list) byName.set(v.name, (list = []));
        list.push(v);
      }
      this.#snapshot = byName;
      return await this.#registry.metrics();
    } finally {
      this.#snapshot = new Map();
      this.#inFlight.dec();
    }
  }

  /** Counts a served scrape by status code. */
  served(code: number): void {
    this.#requests.inc({ code: String(code) });
  }

  #define(e: Export, help: string): void {
    const pairs = Object.entries(e.labels ?? {});
    const labelNames = pairs.map(([p]) => p);
    const snapshot = () => this.#snapshot.get(e.from) ?? [];
    const labelsOf = (v: MetricValue) => Object.fromEntries(pairs.map(([p, i]) => [p, v.labels[i] ?? '']));
    if (e.counter) {
      new Counter({
        name: e.prom, help, labelNames, registers: [this.#registry],
        collect() {
          this.reset();
          for (const v of snapshot()) if (Number.isFinite(v.value) && v.value >= 0) this.inc(labelsOf(v), v.value);
        },
      });
      return;
    }
    new Gauge({
      name: e.prom, help, labelNames, registers: [this.#registry],
      collect() {
        this.reset();
        for (const v of snapshot()) this.set(labelsOf(v), Number.isFinite(v.value) ? v.value : 0);
      },
    });
  }
}
