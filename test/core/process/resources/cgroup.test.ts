import t from 'tap';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Cgroup, parseCfs, parseCpuMax, parseMemoryLimit, parseSelfCgroup, statValue } from '../../../../core/process/resources/cgroup.ts';
import { ProcMachineUsage } from '../../../../core/process/resources/machine.ts';
import type { TestLike } from '../../../helpers/app.ts';

/*
 * The resource budget inside a cgroup (issue 48.4): a container's or a systemd unit's CPU quota
 * and memory limit are "the whole machine" of `resources.*`, as the reference's successor reads
 * them. Parsers on lines recorded from Docker (cgroup v2 and v1) and a systemd unit; the reader
 * and the sampler on folders of those files, with the test's clock.
 */

const STAT = 'cpu  100 0 100 800 0 0 0 0 0 0\n';
const MEMINFO = 'MemTotal:        8039504 kB\nMemFree:          512340 kB\nMemAvailable:    6029628 kB\n';
const MIB = 1024 * 1024;

async function tree(t: TestLike, files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'cgroup-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  for (const [path, text] of Object.entries({ 'proc/stat': STAT, 'proc/meminfo': MEMINFO, ...files })) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

t.test('parsers, on recorded lines', async (t) => {
  t.equal(parseCpuMax('150000 100000\n'), 1.5, 'docker --cpus 1.5');
  t.equal(parseCpuMax('max 100000\n'), undefined, 'no quota');
  t.equal(parseCfs('50000\n', '100000\n'), 0.5, 'v1 quota');
  t.equal(parseCfs('-1\n', '100000\n'), undefined, 'v1: no quota');
  t.equal(parseMemoryLimit('536870912\n'), 512 * MIB);
  t.equal(parseMemoryLimit('max\n'), undefined, 'v2: no limit');
  t.equal(parseMemoryLimit('9223372036854771712\n'), undefined, 'v1: no limit');
  t.equal(statValue('usage_usec 1234567\nuser_usec 1000\n', 'usage_usec'), 1234567);
  t.equal(statValue('active_file 10\ninactive_file 2048\n', 'inactive_file'), 2048);
  t.equal(statValue('total_inactive_file 5\n', 'inactive_file'), undefined, 'whole keys only');
  t.same(parseSelfCgroup('0::/system.slice/core.service\n'), { v2: '/system.slice/core.service', v1: {} });
  t.same(parseSelfCgroup('12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n1:name=systemd:/docker/abc\n0::/docker/abc\n'),
    { v2: '/docker/abc', v1: { cpu: '/docker/abc', cpuacct: '/docker/abc', memory: '/docker/abc', 'name=systemd': '/docker/abc' } });
});

t.test('cgroup v2, a container (its cgroup mounted at the root): quota and limit read there', async (t) => {
  const root = await tree(t, {
    'proc/self/cgroup': '0::/\n',
    'sys/cgroup.controllers': 'cpu memory pids\n',
    'sys/cpu.max': '150000 100000\n',
    'sys/cpu.stat': 'usage_usec 10000000\nuser_usec 8000000\nsystem_usec 2000000\n',
    'sys/memory.max': `${512 * MIB}\n`,
    'sys/memory.current': `${300 * MIB}\n`,
    'sys/memory.stat': `anon ${200 * MIB}\nfile ${100 * MIB}\ninactive_file ${60 * MIB}\n`,
  });
  t.same(new Cgroup(join(root, 'proc'), join(root, 'sys')).read(), { cpuCores: 1.5, cpuSeconds: 10, memoryLimit: 512 * MIB, memoryUsed: 240 * MIB });

  let now = 10_000;
  const m = new ProcMachineUsage(join(root, 'proc'), { sysRoot: join(root, 'sys'), now: () => now });
  t.match(m.sample(), { memoryBytes: 240 * MIB, memoryTotalBytes: 512 * MIB }, 'memory: the cgroup\'s, without the inactive page cache');
  await writeFile(join(root, 'sys/cpu.stat'), 'usage_usec 10750000\n');
  now += 1000;
  t.match(m.sample(), { cpuPercent: 50 }, '0.75 s of CPU in 1 s of 1.5 cores: 50 %');
  await writeFile(join(root, 'sys/cpu.stat'), 'usage_usec 13750000\n');
  now += 1000;
  t.match(m.sample(), { cpuPercent: 100 }, 'never above 100');
  await writeFile(join(root, 'sys/cpu.max'), 'max 100000\n');
  await writeFile(join(root, 'sys/memory.max'), 'max\n');
  await writeFile(join(root, 'proc/stat'), 'cpu  175 0 175 850 0 0 0 0 0 0\n');
  now += 1000;
  t.match(m.sample(), { cpuPercent: 75, memoryTotalBytes: 8039504 * 1024 }, 'limits lifted: the host\'s figures');
});

t.test('cgroup v2, a systemd unit: its own folder', async (t) => {
  const unit = 'sys/system.slice/core.service';
  const root = await tree(t, {
    'proc/self/cgroup': '0::/system.slice/core.service\n',
    'sys/cgroup.controllers': 'cpu memory\n',
    'sys/cpu.max': 'max 100000\n',
    [`${unit}/cpu.max`]: '200000 100000\n',
    [`${unit}/cpu.stat`]: 'usage_usec 5000000\n',
    [`${unit}/memory.max`]: `${1024 * MIB}\n`,
    [`${unit}/memory.current`]: `${100 * MIB}\n`,
  });
  t.same(new Cgroup(join(root, 'proc'), join(root, 'sys')).read(), { cpuCores: 2, cpuSeconds: 5, memoryLimit: 1024 * MIB, memoryUsed: 100 * MIB });
});

t.test('cgroup v1, Docker (the path of /proc/self/cgroup is not under the mounts: their root is the container\'s)', async (t) => {
  const root = await tree(t, {
    'proc/self/cgroup': '12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/docker/abc\n',
    'sys/cpu/cpu.cfs_quota_us': '50000\n',
    'sys/cpu/cpu.cfs_period_us': '100000\n',
    'sys/cpuacct/cpuacct.usage': '2000000000\n',
    'sys/memory/memory.limit_in_bytes': `${256 * MIB}\n`,
    'sys/memory/memory.usage_in_bytes': `${200 * MIB}\n`,
    'sys/memory/memory.stat': `cache ${80 * MIB}\ntotal_inactive_file ${50 * MIB}\n`,
  });
  t.same(new Cgroup(join(root, 'proc'), join(root, 'sys')).read(), { cpuCores: 0.5, cpuSeconds: 2, memoryLimit: 256 * MIB, memoryUsed: 150 * MIB });
  const none = await tree(t, { 'proc/self/cgroup': '4:memory:/\n', 'sys/memory/memory.limit_in_bytes': '9223372036854771712\n', 'sys/memory/memory.usage_in_bytes': '1000\n' });
  t.same(new Cgroup(join(none, 'proc'), join(none, 'sys')).read(), { memoryLimit: undefined }, 'no limit: nothing of the cgroup\'s');
  t.same(new Cgroup(join(none, 'nothing'), join(none, 'sys')).read(), {}, 'no /proc/self/cgroup: nothing');
});
