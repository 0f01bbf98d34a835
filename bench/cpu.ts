/**
 * Where the CPU went during a measurement (Linux /proc): the whole machine's busy share, and the cores used by given
 * processes (an API process, the bench's PostgreSQL with its backends, the load generator). On a small shared
 * machine a throughput figure means little without it: it tells a saturated machine from a saturated API process.
 * Anything /proc cannot tell (another OS) leaves the figure out rather than failing the run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Clock ticks per second of /proc's times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

function machineTicks(): { busy: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const values = line.trim().split(/\s+/).slice(1).map(Number);
    const total = values.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (values[3] ?? 0) + (values[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

/** utime + stime of a process. */
function processTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces: fields are counted after its closing parenthesis (field 3 on).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** utime + stime of every process whose parent is the postmaster (the backends), and of the postmaster itself. */
function postgresTicks(dataDir: string): Map<number, number> {
  const ticks = new Map<number, number>();
  try {
    const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    ticks.set(postmaster, processTicks(postmaster));
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (Number(fields[1]) === postmaster) ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]));
      } catch {
        // The process ended meanwhile.
      }
    }
  } catch {
    // No PostgreSQL data directory to read: no figure.
  }
  return ticks;
}

/** How often the backends are sampled: a backend that ends is missed for at most this long. */
const SAMPLE_MS = 250;

export interface CpuWatch {
  /**
   * Machine busy share in % and cores used per named process group over the time since `watchCpu`; `cpuSeconds`:
   * the same groups' CPU time, unrounded (per request figures divide it).
   */
  stop(): { machineBusyPct: number | null; cores: Record<string, number>; cpuSeconds: Record<string, number> };
}

/**
 * Starts counting. `processes`: name -> pid; `postgresDataDir`: the bench's PostgreSQL (postmaster and backends,
 * sampled every SAMPLE_MS); the calling process (the load generator) is counted as `bench`.
 */
export function watchCpu(processes: Record<string, number | undefined>, postgresDataDir?: string): CpuWatch {
  const startedAt = process.hrtime.bigint();
  const machine = machineTicks();
  const self = process.cpuUsage();
  // PostgreSQL's backends come and go (pools open and close connections, parallel workers): sampled, each
  // backend's ticks since it was last seen are added up.
  let pgUsed = 0;
  let pgLast = postgresDataDir ? postgresTicks(postgresDataDir) : new Map<number, number>();
  const samplePostgres = () => {
    if (!postgresDataDir) return;
    const now = postgresTicks(postgresDataDir);
    // A backend not seen before started since the last sample: all its ticks are new.
    for (const [pid, ticks] of now) pgUsed += ticks - (pgLast.get(pid) ?? 0);
    pgLast = now;
  };
  const sampler = setInterval(samplePostgres, SAMPLE_MS);
  sampler.unref();
  const startTicks = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, pid ? processTicks(pid) : 0]));
  return {
    stop() {
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      const end = machineTicks();
      const round = (v: number) => Math.round(v * 100) / 100;
      const cpuSeconds: Record<string, number> = {};
      for (const [name, pid] of Object.entries(processes)) {
        if (pid) cpuSeconds[name] = (processTicks(pid) - (startTicks[name] ?? 0)) / TICKS_PER_SECOND;
      }
      clearInterval(sampler);
      samplePostgres();
      if (pgLast.size > 0) cpuSeconds.postgres = pgUsed / TICKS_PER_SECOND;
      const used = process.cpuUsage(self);
      cpuSeconds.bench = (used.user + used.system) / 1e6;
      const cores = Object.fromEntries(Object.entries(cpuSeconds).map(([name, used]) => [name, round(used / seconds)]));
      const machineBusyPct = machine && end && end.total > machine.total ? Math.round(((end.busy - machine.busy) / (end.total - machine.total)) * 100) : null;
      return { machineBusyPct, cores, cpuSeconds };
    },
  };
}
