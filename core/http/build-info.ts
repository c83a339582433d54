import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { fileURLToPath } from 'node:url';

export interface BuildInfo { commit: string; branch: string; date: string; version: string }

let cached: BuildInfo | undefined;
let loading: Promise<BuildInfo> | undefined;
const root = () => fileURLToPath(new URL('../../', import.meta.url));
const GIT = { encoding: 'utf8', timeout: 2000 } as const;

function packageVersion(): string {
  try { return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version; } catch { return ''; }
}

/**
 * The build's own identity: package version and, in a git checkout, commit, branch and commit
 * date. Read by `git` in the background (two runs in parallel, the event loop free meanwhile):
 * the synchronous runs it replaced were three, and the first answer of `GET /api` waited for
 * them (issue 29). Start it early; every later call gets the same promise.
 */
export function loadBuildInfo(): Promise<BuildInfo> {
  loading ??= cached ? Promise.resolve(cached) : (async () => {
    const git = (...args: string[]) => new Promise<string>((resolve) => {
      execFile('git', args, { ...GIT, cwd: root() }, (err, out) => resolve(err ? '' : String(out).trim()));
    });
    const [log, branch] = await Promise.all([git('log', '-1', '--format=%H%n%cI'), git('rev-parse', '--abbrev-ref', 'HEAD')]);
    const [commit = '', date = ''] = log.split('\n');
    cached ??= { commit, branch, date, version: packageVersion() };
    return cached;
  })();
  return loading;
}

/** The build's identity now: what `loadBuildInfo` read, or read at once when it has not finished. */
export function buildInfo(): BuildInfo {
  if (cached) return cached;
  const git = (...args: string[]) => {
    try { return execFileSync('git', args, { ...GIT, cwd: root(), stdio: ['ignore', 'pipe', 'ignore'] }).trim(); } catch { return ''; }
  };
  const [commit = '', date = ''] = git('log', '-1', '--format=%H%n%cI').split('\n');
  cached = { commit, branch: git('rev-parse', '--abbrev-ref', 'HEAD'), date, version: packageVersion() };
  return cached;
}

/** Node's names for CPU architectures that Go (GOARCH) spells differently. */
const GO_ARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm: 'arm', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x', mips: 'mips', mipsel: 'mipsle', loong64: 'loong64', riscv64: 'riscv64' };

/** `os/arch` as Go prints it (`linux/amd64`): the reference's clients and UI show this string. */
export function goArch(os: string = platform(), cpu: string = arch()): string {
  return `${os === 'win32' ? 'windows' : os}/${GO_ARCH[cpu] ?? cpu}`;
}
