import t from 'tap';
import { readFileSync } from 'node:fs';
import {
  parseCfsQuota, parseCpuMax, parseMeminfo, parseMemoryLimit, parseNetDev, parseProcStat,
} from '../../../plugins/metrics/collectors/proc-parse.ts';
import { validateMetrics } from '../../../plugins/metrics/schema.ts';

const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8');

t.test('/proc/stat: user, system, idle and the rest (nice, iowait, irq, softirq, steal)', async (t) => {
  const c = parseProcStat(fixture('proc-stat.txt'))!;
  t.same(c, { user: 681095, system: 119881, idle: 1716821, other: 0 + 4459 + 0 + 4200 + 3010, total: 681095 + 119881 + 1716821 + 11669 });
  t.equal(parseProcStat('intr 1 2 3\n'), undefined, 'no cpu line');
  t.equal(parseProcStat('cpu  a b c d\n'), undefined, 'garbage');
});

t.test('/proc/meminfo: total and available in bytes; MemFree when MemAvailable is missing (old kernels)', async (t) => {
  t.same(parseMeminfo(fixture('meminfo.txt')), { total: 24683656 * 1024, available: 23480952 * 1024 });
  t.same(parseMeminfo('MemTotal: 100 kB\nMemFree: 40 kB\n'), { total: 102400, available: 40960 });
  t.equal(parseMeminfo(''), undefined);
});

t.test('/proc/net/dev: bytes received and sent per interface', async (t) => {
  const n = parseNetDev(fixture('net-dev.txt'));
  t.same(n.map((i) => i.name), ['lo', 'ifb0', 'ifb1', 'eth0']);
  t.same(n.find((i) => i.name === 'eth0'), { name: 'eth0', rx: 875401002, tx: 5940437 });
});

t.test('cgroup CPU and memory limits, v2 and v1', async (t) => {
  t.equal(parseCpuMax('max 100000\n'), undefined, 'v2 unlimited');
  t.equal(parseCpuMax('150000 100000\n'), 1.5, 'v2 one and a half CPUs');
  t.equal(parseCfsQuota('-1\n', '100000\n'), undefined, 'v1 unlimited');
  t.equal(parseCfsQuota('200000\n', '100000\n'), 2, 'v1 two CPUs');
  t.equal(parseMemoryLimit('max\n', 8e9), undefined, 'v2 unlimited');
  t.equal(parseMemoryLimit('9223372036854771712\n', 8e9), undefined, 'v1 "unlimited" is a huge number');
  t.equal(parseMemoryLimit('536870912\n', 8e9), 536870912);
});

t.test('metrics config rules: checked when history is on', async (t) => {
  const base = { enable: true, enable_prometheus: false, range_sec: 300, interval_sec: 2 };
  t.same(validateMetrics(base), {});
  t.same(validateMetrics({ ...base, enable: false, interval_sec: 0 }), {}, 'off: not checked');
  t.same(Object.keys(validateMetrics({ ...base, interval_sec: 0 })), ['interval_sec']);
  t.same(Object.keys(validateMetrics({ ...base, range_sec: 0 })).sort(), ['interval_sec', 'range_sec']);
  t.same(Object.keys(validateMetrics({ ...base, interval_sec: 301 })), ['interval_sec'], 'interval over range');
});
