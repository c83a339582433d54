import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { fileURLToPath } from 'node:url';

export interface BuildInfo { commit: string; branch: string; date: string; version: string }

let cached: BuildInfo | undefined;

/** The build's own identity: package version and, in a git checkout, commit and branch. */
export function buildInfo(): BuildInfo {
  if (cached) return cached;
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const git = (...args: string[]) => {
    try { return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 2000 }).trim(); } catch { return ''; }
  };
  let version = '';
  try { version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version; } catch { /* none */ }
  cached = { commit: git('rev-parse', 'HEAD'), branch: git('rev-parse', '--abbrev-ref', 'HEAD'), date: git('log', '-1', '--format=%cI'), version };
  return cached;
}

/** Node's names for CPU architectures that Go (GOARCH) spells differently. */
const GO_ARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm: 'arm', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x', mips: 'mips', mipsel: 'mipsle', loong64: 'loong64', riscv64: 'riscv64' };

/** `os/arch` as Go prints it (`linux/amd64`): the reference's clients and UI show this string. */
export function goArch(os: string = platform(), cpu: string = arch()): string {
  return `${os === 'win32' ? 'windows' : os}/${GO_ARCH[cpu] ?? cpu}`;
}
