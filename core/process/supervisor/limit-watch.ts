export interface SupervisorLimits {
  /** Percent of ONE core (100 = one full core); 0 = no limit. */
  cpuUsage: number;
  /** Resident set size in bytes; 0 = no limit. */
  memoryBytes: number;
  /** How long a limit must be exceeded without a break before the process is killed. */
  waitforSeconds: number;
}

/**
 * Decides from successive samples whether a child has been over a limit for long enough
 * (reference 7.3: continuously for at least `waitfor`; 0 = on the first exceeding sample).
 */
export class LimitWatch {
  #cpuSince = -1;
  #memSince = -1;

  reset(): void {
    this.#cpuSince = -1;
    this.#memSince = -1;
  }

  /**
   * Feeds one sample (a negative value means unknown and counts as "not over").
   * Returns why the child must be killed, or undefined.
   */
  check(limits: SupervisorLimits, cpuUsage: number, memoryBytes: number, now: number): string | undefined {
    const waitMs = Math.max(0, limits.waitforSeconds) * 1000;
    if (limits.cpuUsage > 0 && cpuUsage > limits.cpuUsage) {
      if (this.#cpuSince < 0) this.#cpuSince = now;
      if (now - this.#cpuSince >= waitMs) {
        return `cpu limit exceeded: ${cpuUsage.toFixed(1)} % of a core > ${limits.cpuUsage} % for ${limits.waitforSeconds} s`;
      }
    } else {
      this.#cpuSince = -1;
    }
    if (limits.memoryBytes > 0 && memoryBytes > limits.memoryBytes) {
      if (this.#memSince < 0) this.#memSince = now;
      if (now - this.#memSince >= waitMs) {
        return `memory limit exceeded: ${memoryBytes} bytes > ${limits.memoryBytes} bytes for ${limits.waitforSeconds} s`;
      }
    } else {
      this.#memSince = -1;
    }
    return undefined;
  }
}
