import t from 'tap';
import { memoryLimitOf, runtimeEnv, runtimeFlags, threadsSettingOf } from '../../../core/runtime/flags.ts';
import {
  CALM_BYTES, GROWTH_BYTES, MIN_GAP_MS, isCalm, QUIET_CHECK_MAX_MS, QUIET_CHECK_MS, TRIM_GROWTH_BYTES, nextCheckMs, shouldReduce, shouldTrim, startQuietCollector,
} from '../../../core/runtime/quiet-gc.ts';
import { mallocTrim } from '../../../core/runtime/malloc-trim.ts';
import { existsSync } from 'node:fs';

/* The runtime settings (issue 29, point 5): what the relaunch adds, and when the quiet collector runs. */

t.test('flags: the semi-space and the heap growing always, the old space from the memory limit, the operator\'s own kept', async (t) => {
  const always = ['--max-semi-space-size=2', '--heap-growing-percent=100'];
  t.same(runtimeFlags(0, []), always);
  t.same(runtimeFlags(512, []), [...always, '--max-old-space-size=448']);
  t.same(runtimeFlags(100, []), [...always, '--max-old-space-size=64'], 'at least 64');
  t.same(runtimeFlags(512, ['--max-semi-space-size=16', '--max-old-space-size=300', '--heap-growing-percent=50']), [], 'given flags win');
  t.same(runtimeFlags(0, ['--max-semi-space-size', '16']), ['--heap-growing-percent=100'], 'in either spelling');
});

t.test('the memory limit and the thread setting come from the file, the environment winning', async (t) => {
  t.equal(memoryLimitOf('{"debug":{"memory_limit_mbytes":256}}', {}), 256);
  t.equal(memoryLimitOf('{"debug":{"memory_limit_mbytes":256}}', { CORE_DEBUG_MEMORY_LIMIT_MBYTES: '128' }), 128);
  t.equal(memoryLimitOf('not json', {}), 0, 'a broken file is the loader\'s to report');
  t.equal(memoryLimitOf(undefined, {}), 0);
  t.equal(threadsSettingOf('{"http":{"threads":2}}', {}), 2);
  t.equal(threadsSettingOf('{"http":{"threads":2}}', { CORE_HTTP_THREADS: '0' }), 0);
  t.equal(threadsSettingOf('{}', {}), -1, 'auto when unsaid');
});

t.test('two malloc arenas without serving threads, glibc\'s own with them or when the operator chose', async (t) => {
  t.same(runtimeEnv({}, 0), { MALLOC_ARENA_MAX: '2' });
  t.equal(runtimeEnv({}, 2), undefined);
  t.equal(runtimeEnv({ MALLOC_ARENA_MAX: '8' }, 0), undefined);
});

t.test('the quiet collector reduces once after boot, then only after growth, when quiet, not too often', async (t) => {
  const quiet = { utilization: 0.01, sinceLastMs: MIN_GAP_MS };
  t.ok(shouldReduce({ ...quiet, committed: 50e6, baseline: undefined }), 'the boot\'s garbage');
  t.notOk(shouldReduce({ ...quiet, committed: 50e6, baseline: 40e6 }), 'little growth');
  t.ok(shouldReduce({ ...quiet, committed: 40e6 + GROWTH_BYTES, baseline: 40e6 }), 'grown by the bound');
  t.notOk(shouldReduce({ ...quiet, utilization: 0.5, committed: 90e6, baseline: 40e6 }), 'not while busy');
  t.notOk(shouldReduce({ ...quiet, sinceLastMs: 1000, committed: 90e6, baseline: 40e6 }), 'not twice within the gap');
  // after a busy spell V8 keeps the pages its collections freed pooled outside the committed heap (issue 46)
  const after = { ...quiet, committed: 35e6, baseline: 40e6, rssBaseline: 90e6 };
  t.ok(shouldReduce({ ...after, rss: 90e6 + GROWTH_BYTES, busySince: true }), 'RSS up by the bound after a busy spell');
  t.notOk(shouldReduce({ ...after, rss: 90e6 + GROWTH_BYTES, busySince: false }), 'not without a busy spell since the last one');
  t.notOk(shouldReduce({ ...after, rss: 100e6, busySince: true }), 'not for a little RSS');
  t.notOk(shouldReduce({ ...after, rss: 200e6, rssBaseline: undefined, busySince: true }), 'not without an RSS baseline (a serving thread)');
  const calls: unknown[] = [];
  const collector = startQuietCollector((o) => { calls.push(o); });
  t.teardown(() => collector.stop());
  const deadline = Date.now() + 10_000;
  while (collector.reductions === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  t.equal(collector.reductions, 1, 'the first quiet look reduces');
  t.same(calls[0], { type: 'major', execution: 'sync', flavor: 'last-resort' }, 'a memory-reducing collection');
});

// issue 46.2: an idle service woke every 2 s for this look
t.test('the quiet collector looks less often while nothing happens, at once again after anything', async (t) => {
  let wait = QUIET_CHECK_MS;
  const waits = [];
  for (let i = 0; i < 5; i++) waits.push((wait = nextCheckMs(wait, true)));
  t.same(waits, [4_000, 8_000, 16_000, 16_000, 16_000], 'doubling up to the longest wait');
  t.equal(QUIET_CHECK_MAX_MS, 16_000);
  t.equal(nextCheckMs(16_000, false), QUIET_CHECK_MS, 'a busy look, a reduction, a trim or growth: back to 2 s');
});

t.test('a look is calm by the growth per 2 s of wait: an idle drift over 16 s is calm, a jump is not', async (t) => {
  const look = { utilization: 0.001, reduced: false, trimmed: false, committed: 30e6, committedBefore: 30e6, rss: 88e6, rssBefore: 88e6 };
  t.ok(isCalm({ ...look, waitedMs: 16_000, rss: 88e6 + 1.5 * 1024 * 1024 }), '1.5 MB of RSS in 16 s (what an idle service drifts): calm');
  t.notOk(isCalm({ ...look, waitedMs: 2_000, rss: 88e6 + 1.5 * 1024 * 1024 }), 'the same in 2 s: not calm');
  t.notOk(isCalm({ ...look, waitedMs: 16_000, committed: 30e6 + 8 * CALM_BYTES }), '8 MB of heap in 16 s: not calm');
  t.ok(isCalm({ ...look, waitedMs: 1_000, rss: 88e6 + CALM_BYTES - 1 }), 'a shorter wait counts as 2 s');
  t.notOk(isCalm({ ...look, waitedMs: 16_000, utilization: 0.5 }), 'busy');
  t.notOk(isCalm({ ...look, waitedMs: 16_000, reduced: true }), 'a reduction');
  t.notOk(isCalm({ ...look, waitedMs: 16_000, trimmed: true }), 'a trim');
});

t.test('a quiet look trims malloc after a reduction or RSS growth, never while busy', async (t) => {
  const quiet = { utilization: 0.01, reduced: false };
  t.ok(shouldTrim({ ...quiet, rss: 90e6, baseline: undefined }), 'once after boot');
  t.notOk(shouldTrim({ ...quiet, rss: 90e6, baseline: 85e6 }), 'little growth');
  t.ok(shouldTrim({ ...quiet, rss: 85e6 + TRIM_GROWTH_BYTES, baseline: 85e6 }), 'grown by the bound');
  t.ok(shouldTrim({ ...quiet, rss: 86e6, baseline: 85e6, reduced: true }), 'after a memory-reducing collection');
  t.notOk(shouldTrim({ ...quiet, utilization: 0.5, rss: 200e6, baseline: 85e6, reduced: true }), 'not while busy');
  // a stand-in trim (counting calls) with the real timer
  let trims = 0;
  const collector = startQuietCollector(() => {}, () => { trims++; return true; });
  t.teardown(() => collector.stop());
  const deadline = Date.now() + 10_000;
  while (collector.trims === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  t.equal(trims, 1, 'the first quiet look trims (after its reduction)');
});

t.test('the runtime\'s malloc_trim module loads where it was built', async (t) => {
  const built = existsSync(new URL('../../../core/runtime/trim/build/malloc-trim.node', import.meta.url));
  if (!built) { t.comment('not built here (no C compiler): scripts/ensure-trim.sh'); return; }
  const trim = mallocTrim();
  t.type(trim, 'function');
  t.type(trim?.(), 'boolean', 'malloc_trim(0) answered');
  t.equal(mallocTrim(), trim, 'loaded once');
});
