import t from 'tap';
import { request } from '../../helpers/app.ts';
import { startCli } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * Issue 27.4: reloads do not make the service grow (40 reloads took it from 172 to 367 MB). The
 * service runs as its own OS process with the default plugins; RSS comes from /proc. A bound on
 * memory is asked for by the issue (measured here: 3.6 to 7 MB after 100, 3.9 MB after 300, so
 * it levels off; before the fix about 300 MB after 100).
 */

const MIB = 1024 * 1024;
const WARM_UPS = 2;
const RELOADS = 100;

t.test(`${RELOADS} reloads after ${WARM_UPS} warm-ups grow RSS by at most 10 MB`, { timeout: 20 * 60_000 }, async (t) => {
  // the service's memory, not the coverage profiler's (tap would record every reloaded module's counts)
  const cli = await startCli(t, {}, { env: { _TAPJS_PROCESSINFO_COVERAGE_: '0' } });
  const reloadAs = async (name: string) => {
    // a keep-alive connection the client pooled before the last reload may be one the old app
    // closed; a client sends again on a fresh one, as browsers do (issue 29 made reloads fast
    // enough for fetch to pick such a socket now and then)
    const put = await request(cli.url, 'PUT', '/api/v3/config', { body: { name } })
      .catch((err: { cause?: { code?: string } }) => {
        if (err.cause?.code !== 'ECONNRESET') throw err;
        return request(cli.url, 'PUT', '/api/v3/config', { body: { name } });
      });
    if (put.status !== 200) throw new Error(`PUT: ${put.status} ${put.text}`);
    const r = await request(cli.url, 'GET', '/api/v3/config/reload');
    if (r.status !== 200) throw new Error(`reload: ${r.status} ${r.text}`);
    await waitFor(async () => (await request(cli.url, 'GET', '/api')).body?.name === name, { timeout: 60_000, what: `the reload to ${name}` });
  };
  // the median of a few samples: one read can catch a request's short-lived buffers
  const rss = async () => {
    const xs: number[] = [];
    for (let i = 0; i < 5; i++) { xs.push(cli.memory().rss); await new Promise((r) => setTimeout(r, 100)); }
    return xs.sort((a, b) => a - b)[2]!;
  };
  for (let i = 0; i < WARM_UPS; i++) await reloadAs(`warm-up-${i}`);
  const before = await rss();
  for (let i = 0; i < RELOADS; i++) await reloadAs(`reload-${i}`);
  const after = await rss();
  t.comment(`RSS ${(before / MIB).toFixed(1)} MB -> ${(after / MIB).toFixed(1)} MB after ${RELOADS} reloads`);
  t.ok(after - before <= 10 * MIB, `grew by ${((after - before) / MIB).toFixed(1)} MB`);
  t.equal(cli.child.exitCode, null, 'still running');
});
