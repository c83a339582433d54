import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { PolicyIndex, type Decision, type Policy, type PolicyUser } from '../../plugins/iam/policy.ts';
import { head, ROOT, uptime } from '../llhls/common.ts';

/**
 * The cost of one policy decision (issue 49.4: under 0.1 ms p99 with 1,000 users and 10,000
 * policies). Users `u0`..`u999`, ten policies each of the forms operators write (a literal
 * stream, globs over a customer's channels and API paths, alternatives, a domain glob), then
 * `--decisions` questions for random users, half of them allowed, each timed alone
 * (process.hrtime.bigint, its own cost included). In-process: a decision is a call, not a request.
 *
 *   node bench/iam/decide.ts [--users 1000] [--decisions 200000] [--write]
 */
const args = process.argv.slice(2);
const num = (name: string, def: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : def; };
const USERS = num('users', 1000);
const DECISIONS = num('decisions', 200_000);

function policies(u: number): Policy[] {
  const c = `customer-${u}`;
  return [
    { domain: '$none', types: ['rtmp', 'srt', 'webrtc', 'hls'], resource: `live/${c}/*`, actions: ['PLAY', 'PUBLISH'] },
    { domain: '$none', types: ['rtmp'], resource: `event/${c}`, actions: ['PUBLISH'] },
    { domain: '$none', types: ['api'], resource: `/api/v3/process/${c}-*/**`, actions: ['GET'] },
    { domain: '$none', types: ['api'], resource: '/api/v3/process', actions: ['GET', 'POST'] },
    { domain: '$none', types: ['fs'], resource: `/memfs/${c}/**`, actions: ['GET', 'PUT', 'DELETE'] },
    { domain: `${c}*`, types: ['process'], resource: `${c}-*`, actions: ['read', 'write', 'command'] },
    { domain: '$none', types: ['process'], resource: `{${c},shared}-[0-9]*`, actions: ['read'] },
    { domain: '$none', types: ['srt'], resource: `backup/${c}/**`, actions: ['*'] },
    { domain: '$none', types: ['iam'], resource: `u${u}`, actions: ['read'] },
    { domain: '$none', types: ['hls'], resource: `vod/${c}/?/index.m3u8`, actions: ['PLAY'] },
  ];
}

function question(i: number): Decision {
  const u = (i * 7919) % USERS;
  const mine = i % 2 === 0;
  const c = `customer-${mine ? u : (u + 1) % USERS}`;
  const user = `u${u}`;
  switch (i % 8) {
    case 0: case 1: return { user, type: 'rtmp', resource: `live/${c}/cam${i % 10}`, action: 'PUBLISH' };
    case 2: case 3: return { user, type: 'api', resource: `/api/v3/process/${c}-${i % 50}/state`, action: 'GET' };
    case 4: return { user, type: 'fs', resource: `/memfs/${c}/ch/seg_${i}.ts`, action: 'PUT' };
    case 5: return { user, type: 'process', domain: `${c}-tv`, resource: `${c}-${i % 50}`, action: 'command' };
    case 6: return { user, type: 'srt', resource: `backup/${c}/a/b`, action: 'PLAY' };
    default: return { user, type: 'process', resource: `${c}-${i % 10}x`, action: 'read' };
  }
}

const users: PolicyUser[] = Array.from({ length: USERS }, (_, u) => ({ name: `u${u}`, policies: policies(u) }));
const load0 = uptime();
const t0 = process.hrtime.bigint();
const index = new PolicyIndex(users);
const compileMs = Number(process.hrtime.bigint() - t0) / 1e6;
const qs = Array.from({ length: DECISIONS }, (_, i) => question(i));
// warm-up: the JIT sees every path before the timed pass
let allowed = 0;
for (const q of qs) if (index.allowed(q)) allowed++;
const times = new Float64Array(DECISIONS);
allowed = 0;
for (let i = 0; i < DECISIONS; i++) {
  const a = process.hrtime.bigint();
  if (index.allowed(qs[i]!)) allowed++;
  times[i] = Number(process.hrtime.bigint() - a) / 1000;
}
const empty = new Float64Array(10_000);
for (let i = 0; i < empty.length; i++) { const a = process.hrtime.bigint(); empty[i] = Number(process.hrtime.bigint() - a) / 1000; }
times.sort();
empty.sort();
const at = (a: Float64Array, p: number) => a[Math.min(a.length - 1, Math.floor(a.length * p))]!.toFixed(2);
const md = [
  `# IAM policy decisions (issue 49.4), ${new Date().toISOString()}`, '',
  `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), Node ${process.version}. Commit: ${head()}.`,
  `uptime before: \`${load0}\`; after: \`${uptime()}\`.`, '',
  `${USERS} users, ${USERS * 10} policies (ten forms each: literal and glob resources, alternatives, classes, domain globs);`,
  `compiled in ${compileMs.toFixed(1)} ms. ${DECISIONS} decisions for random users, ${allowed} allowed, each timed alone:`, '',
  '| | p50 (µs) | p99 (µs) | p99.9 (µs) | max (µs) |', '|---|---:|---:|---:|---:|',
  `| one decision (timer included) | ${at(times, 0.5)} | ${at(times, 0.99)} | ${at(times, 0.999)} | ${times[times.length - 1]!.toFixed(1)} |`,
  `| the timer alone | ${at(empty, 0.5)} | ${at(empty, 0.99)} | ${at(empty, 0.999)} | ${empty[empty.length - 1]!.toFixed(1)} |`, '',
  'Aim: under 100 µs p99.', '',
].join('\n');
console.log(md);
if (args.includes('--write')) {
  const file = join(ROOT, 'bench/results', `iam-decide-${new Date().toISOString().slice(0, 10)}.md`);
  writeFileSync(file, md);
  console.log(`wrote ${file}`);
}
