import type { ProcessesService, ProcessExecState, ProcessMetricsInfo, ProcessStreamProgress } from '../../../sdk/index.ts';
import type { MetricCollector, MetricDescription, MetricValue } from '../api.ts';

const STATES: readonly ProcessExecState[] = ['finished', 'starting', 'running', 'finishing', 'failed', 'killed'];
const PROCESS_NAMES = ['frame', 'fps', 'speed', 'q', 'size', 'time', 'drop', 'dup', 'packet', 'bitrate', 'cpu', 'memory', 'uptime', 'cpu_limit', 'memory_limit'] as const;
type ProcessName = typeof PROCESS_NAMES[number];

const DESCRIPTIONS: readonly MetricDescription[] = [
  { name: 'restream_process', description: 'Current process values by name', labels: ['processid', 'state', 'order', 'name'] },
  { name: 'restream_process_states', description: 'Entries into each state per process', labels: ['processid', 'state'] },
  { name: 'restream_io', description: 'Current process IO values by name', labels: ['processid', 'type', 'id', 'address', 'index', 'stream', 'media', 'name'] },
  { name: 'restream_state', description: 'Number of processes in each state', labels: ['state'] },
  { name: 'ffmpeg_process', description: 'Entries into each state by any process', labels: ['state'] },
];

function processValue(m: ProcessMetricsInfo, name: ProcessName): number {
  const p = m.progress;
  switch (name) {
    case 'frame': return p.frame;
    case 'fps': return p.fps;
    case 'speed': return p.speed;
    case 'q': return m.q;
    case 'size': return p.sizeKb * 1024;
    case 'time': return p.time;
    case 'drop': return p.drop;
    case 'dup': return p.dup;
    case 'packet': return p.packet;
    case 'bitrate': return p.bitrateKbit * 1024;
    case 'cpu': return m.cpu;
    case 'memory': return m.memoryBytes;
    case 'uptime': return m.stateSeconds;
    case 'cpu_limit': return m.cpuLimit;
    case 'memory_limit': return m.memoryLimitBytes;
  }
}

/** Label objects of one process, rebuilt only when its state or order changes (the tick stays allocation-light). */
interface LabelCache {
  key: string;
  byName: Readonly<Record<string, string>>[];
  byState: Readonly<Record<string, string>>[];
  /** Per stream (its identity as the key): label objects by IO value name. */
  io: Map<string, Map<string, Readonly<Record<string, string>>>>;
}

/** `restream_*` and `ffmpeg_process` from the process engine's read-only figures (reference 12.4). */
export function processesCollector(processes: ProcessesService): MetricCollector {
  const cache = new Map<string, LabelCache>();
  const stateLabels = STATES.map((state) => Object.freeze({ state }));

  const labelsOf = (id: string, m: ProcessMetricsInfo): LabelCache => {
    const key = `${m.exec}\0${m.order}`;
    let c = cache.get(id);
    if (c?.key !== key) {
      c = {
        key,
        byName: PROCESS_NAMES.map((name) => Object.freeze({ processid: id, state: m.exec, order: m.order, name })),
        byState: STATES.map((state) => Object.freeze({ processid: id, state })),
        io: new Map(),
      };
      cache.set(id, c);
    }
    return c;
  };

  const io = (out: MetricValue[], id: string, c: LabelCache, type: 'input' | 'output', s: ProcessStreamProgress): void => {
    const key = `${type}\0${s.id}\0${s.index}\0${s.stream}\0${s.type}\0${s.address}`;
    let byName = c.io.get(key);
    if (!byName) c.io.set(key, (byName = new Map()));
    const add = (name: string, value: number) => {
      let labels = byName.get(name);
      if (!labels) {
        labels = Object.freeze({ processid: id, type, id: s.id, address: s.address, index: String(s.index), stream: String(s.stream), media: s.type, name });
        byName.set(name, labels);
      }
      out.push({ name: 'restream_io', labels, value });
    };
    add('frame', s.frame); add('fps', s.fps); add('packet', s.packet); add('pps', s.pps);
    add('size', s.size_kb * 1024); add('bitrate', s.bitrate_kbit * 1024);
    if (type === 'output') add('q', s.q);
    const av = s.avstream;
    if (type === 'input' && av) {
      add('avstream_queue', av.queue); add('avstream_dup', av.dup); add('avstream_drop', av.drop); add('avstream_enc', av.enc);
      add('avstream_looping', av.looping ? 1 : 0); add('avstream_duplicating', av.duplicating ? 1 : 0);
    }
  };

  return {
    describe: () => DESCRIPTIONS,
    collect() {
      const out: MetricValue[] = [];
      const now: Record<string, number> = { finished: 0, starting: 0, running: 0, finishing: 0, failed: 0, killed: 0 };
      const seen = new Set<string>();
      for (const { id } of processes.list()) {
        const m = processes.metrics(id);
        if (!m) continue;
        seen.add(id);
        now[m.exec] = (now[m.exec] ?? 0) + 1;
        const l = labelsOf(id, m);
        PROCESS_NAMES.forEach((name, i) => out.push({ name: 'restream_process', labels: l.byName[i]!, value: processValue(m, name) }));
        STATES.forEach((state, i) => out.push({ name: 'restream_process_states', labels: l.byState[i]!, value: m.states[state] }));
        // streams of past runs are forgotten when the process changes state (the cache is rebuilt)
        for (const s of m.inputs) io(out, id, l, 'input', s);
        for (const s of m.outputs) io(out, id, l, 'output', s);
      }
      for (const id of cache.keys()) if (!seen.has(id)) cache.delete(id);
      const entries = processes.stateEntries();
      STATES.forEach((state, i) => {
        out.push({ name: 'restream_state', labels: stateLabels[i]!, value: now[state]! });
        out.push({ name: 'ffmpeg_process', labels: stateLabels[i]!, value: entries[state] });
      });
      return out;
    },
  };
}
