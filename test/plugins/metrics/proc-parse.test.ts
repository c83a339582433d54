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
  t.equal(parseProcStat('cpu 1 2 3\n'), undefined, 'three fields');
  t.equal(parseProcStat('cpu 1 2 3 4 5 6 7 8 9 x\n'), undefined, 'a later field not a number');
  t.same(parseProcStat('cpu 1\t2  3 4'), { user: 1, system: 3, idle: 4, other: 2, total: 10 }, 'four fields, a tab, no newline');
  t.same(parseProcStat('cpu 1 0 0 1 0 0 0 0 5 5\ncpu0 9 9 9 9\n'), { user: 1, system: 0, idle: 1, other: 0, total: 2 }, 'guest fields read, not added; only the first line');
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

t.test('the scans read what the old splits read, and nothing else', async (t) => {
  t.same(parseMeminfo('MemFree: 40 kB\nMemTotal:\t100 kB\n'), { total: 102400, available: 40960 }, 'a key on a later line, a tab');
  t.equal(parseMeminfo('XMemTotal: 100 kB\n'), undefined, 'only at a line\'s start');
  t.equal(parseMeminfo('MemTotal:100 kB\n'), undefined, 'no blank after the colon');
  t.equal(parseMeminfo('MemTotal: kB\n'), undefined, 'no number');
  t.same(parseMeminfo('MemTotal: 100 kB\nMemAvailable: x\nMemFree: 7 kB'), { total: 102400, available: 7168 }, 'an unreadable figure falls back');
  const line = (name: string, f: string) => `${name}:${f}\n`;
  t.same(parseNetDev(line('  a', ' 1 2 3 4 5 6 7 8 9') + line('b', ' 1 2 3 4 5 6 7 8') + line('c', ' x 2 3 4 5 6 7 8 9') + line('', ' 1 2 3 4 5 6 7 8 9') + line('d', '\t5\t0 0 0 0 0 0 0 6')),
    [{ name: 'a', rx: 1, tx: 9 }, { name: 'd', rx: 5, tx: 6 }], 'too few fields, a field not a number, no name: skipped');
  t.same(parseNetDev('lo: 1 2 3 4 5 6 7 8 9'), [{ name: 'lo', rx: 1, tx: 9 }], 'the last line without a newline');
});
