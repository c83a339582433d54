import type { MetricValue } from './api.ts';

/** One exported metric: its internal source and how its labels are renamed (reference 12.5). */
export interface Export {
  prom: string;
  from: string;
  counter?: boolean;
  /** Prometheus label name -> internal label name. */
  labels?: Record<string, string>;
}

const L = (...names: string[]) => Object.fromEntries(names.map((n) => [n, n]));
const PROC = { process: 'processid' };

export const EXPORTS: readonly Export[] = [
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

/** `# HELP` text and label values as the text format 0.0.4 escapes them (a label value also escapes `"`). */
const escapeHelp = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const NEEDS_ESCAPE = /[\\\n"]/;
const escapeLabel = (s: string) => (NEEDS_ESCAPE.test(s) ? escapeHelp(s).replace(/"/g, '\\"') : s);

function valueText(v: number): string {
  if (Number.isNaN(v)) return 'Nan';
  if (!Number.isFinite(v)) return v < 0 ? '-Inf' : '+Inf';
  return String(v);
}

/** One metric of the export: its head lines and how a value's labels are written. */
interface Family {
  readonly e: Export;
  readonly head: string;
  /** Prometheus label name -> internal label name, in the order they are written. */
  readonly pairs: readonly (readonly [string, string])[];
  /** Label text by labels object: collectors keep one object per series (the processes' do), so a scrape reuses it. */
  readonly text: WeakMap<object, string>;
}

/**
 * `/metrics`: the Prometheus text format (0.0.4) written straight from one snapshot of the
 * collected values, every series labelled `core=<config.id>` after its own labels. A scrape
 * allocates about its text and nothing more (prom-client's Registry, used before, rebuilt a
 * hash map of label objects per metric per scrape: about 50x the text in garbage, which made V8
 * grow its young generation by tens of MB under a few scrapes a second).
 * Counters sum the values of one label set, gauges keep the last, as prom-client did.
 */
export class PrometheusExport {
  readonly #families: Family[];
  readonly #core: string;
  /** Scrapes served by status code, in the order first seen. */
  readonly #requests = new Map<string, number>();
  #inFlight = 0;

  /** `help`: the descriptions of the internal names, for the HELP lines. */
  constructor(coreId: string, help: ReadonlyMap<string, string>) {
    this.#core = `core="${escapeLabel(coreId)}"`;
    this.#families = EXPORTS.map((e) => ({
      e, pairs: Object.entries(e.labels ?? {}), text: new WeakMap(),
      head: `# HELP ${e.prom} ${escapeHelp(help.get(e.from) || e.from)}\n# TYPE ${e.prom} ${e.counter ? 'counter' : 'gauge'}`,
    }));
  }

  get contentType(): string {
    return 'text/plain; version=0.0.4; charset=utf-8';
  }

  /** The text of one scrape from the values collected for it; the scrape itself is counted after, as promhttp does. */
  async render(values: readonly MetricValue[]): Promise<string> {
    this.#inFlight++;
    try {
      const byName = new Map<string, MetricValue[]>();
      for (const v of values) {
        let list = byName.get(v.name);
        if (!list) byName.set(v.name, (list = []));
        list.push(v);
      }
      const out: string[] = [];
      for (const f of this.#families) this.#family(f, byName.get(f.e.from) ?? [], out);
      out.push(this.#own(), '\n');
      return out.join('');
    } finally {
      this.#inFlight--;
    }
  }

  /** Counts a served scrape by status code. */
  served(code: number): void {
    const key = String(code);
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
  }

  /** A family's lines onto `out`: one per distinct label set, in the order first seen; a blank line after. */
  #family(f: Family, values: readonly MetricValue[], out: string[]): void {
    const series = new Map<string, number>();
    // a metric without labels always has its one series (0 when nothing was collected)
    if (f.pairs.length === 0) series.set('', 0);
    for (const v of values) {
      if (f.e.counter && !(Number.isFinite(v.value) && v.value >= 0)) continue;
      const labels = this.#labels(f, v);
      const value = f.e.counter ? (series.get(labels) ?? 0) + v.value : Number.isFinite(v.value) ? v.value : 0;
      series.set(labels, value);
    }
    out.push(f.head);
    for (const [labels, value] of series) out.push('\n', f.e.prom, '{', labels, this.#core, '} ', valueText(value));
    out.push('\n\n');
  }

  /** `name="value",` per label of the family, in its order. */
  #labels(f: Family, v: MetricValue): string {
    const known = f.text.get(v.labels);
    if (known !== undefined) return known;
    const parts: string[] = [];
    for (const [p, i] of f.pairs) parts.push(p, '="', escapeLabel(v.labels[i] ?? ''), '",');
    const text = parts.join('');
    if (Object.isFrozen(v.labels)) f.text.set(v.labels, text);
    return text;
  }

  /** promhttp's own two metrics: scrapes by code and the scrapes being served (this one included). */
  #own(): string {
    let out = '# HELP promhttp_metric_handler_requests_total Total number of scrapes by HTTP status code.\n'
      + '# TYPE promhttp_metric_handler_requests_total counter';
    for (const [code, n] of this.#requests) out += `\npromhttp_metric_handler_requests_total{code="${code}",${this.#core}} ${n}`;
    return `${out}\n\n# HELP promhttp_metric_handler_requests_in_flight Current number of scrapes being served.\n`
      + `# TYPE promhttp_metric_handler_requests_in_flight gauge\npromhttp_metric_handler_requests_in_flight{${this.#core}} ${this.#inFlight}`;
  }
}
