import { TOKEN } from './srt-helpers.ts';
import { recordedHandshake, setSid, type FuzzCase } from './fuzz-gen.ts';
import { EXT, buildHandshake, type Handshake } from './fuzz-wire.ts';

/*
 * Inputs the SRT fuzz suite found that take the service down (libsrt 1.5.1, the Debian 12
 * package, with a passphrase set), reduced to one handshake each: the recorded publisher's
 * induction, then its conclusion (the service's SYN cookie patched in) with one change.
 * fuzz.test.ts replays each against a fresh service; a crash may show only at a later
 * allocation, so valid handshakes follow each.
 *
 * Not reduced yet: a SIGSEGV in CUDT::updateCC (or EmitSignal) called from CUDT::checkTimers on
 * libsrt's receive thread, after some 100 to 200 cases of `FUZZ_GENERATORS=session` (seed 27),
 * one lane or sixteen; no single case of them alone does it.
 */

export interface CrashInput {
  name: string;
  case: FuzzCase;
}

/** Induction, then the publisher's conclusion as `change` makes it (a name of its own). */
export function conclusionCase(name: string, change: (h: Handshake) => void = () => {}): FuzzCase {
  const { induction, conclusion } = recordedHandshake('publish');
  setSid(conclusion, Buffer.from(`${name},mode:publish,token:${TOKEN}`));
  change(conclusion);
  return {
    generator: 'crash',
    steps: [{ bytes: induction, awaitMs: 250, retry: true }, { bytes: buildHandshake(conclusion), cookie: true, awaitMs: 250 }],
    holdMs: 0,
  };
}

export const CRASH_INPUTS: CrashInput[] = [
  {
    // the answer (handshake, HSRSP, KMRSP) is written into a packet sized by the peer's MSS: a heap
    // overrun in CUDT::acceptAndRespond -> createSrtHandshake -> fillSrtHandshake (valgrind); any
    // MSS from about 50 to 150 does it; SIGABRT or SIGSEGV at a later allocation
    name: 'a publisher conclusion with MSS 76',
    case: conclusionCase('crash-mss', (h) => { h.mtu = 76; }),
  },
  {
    // a packet-filter (SRT_CMD_FILTER) block whose string is empty: SIGSEGV in SrtParseConfig
    // (CUDT::interpretSrtHandshake -> checkApplyFilterConfig -> ParseFilterConfig)
    name: 'a publisher conclusion with an empty packet-filter extension',
    case: conclusionCase('crash-filter', (h) => { h.exts.push({ type: EXT.filter, body: Buffer.alloc(4) }); }),
  },
];
