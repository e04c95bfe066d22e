import { readdirSync, readFileSync } from 'node:fs';

/** One thread's scheduler counters, read from /proc: CPU time in ns (schedstat), moves between cores, preemptions. */
export interface ThreadCpu {
  tid: number;
  name: string;
  cpuNs: number;
  migrations: number;
  involuntary: number;
  /** Minor page faults (memory first touched, or mapped afresh). */
  minorFaults: number;
}

/** A process or thread that ended between listing and reading: /proc answers ENOENT or ESRCH. */
function ended(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ESRCH';
}

function schedField(text: string, field: string): number {
  const line = text.split('\n').find((l) => l.startsWith(field));
  return Number(line?.split(':')[1]?.trim() ?? 0);
}

/** Every thread of `pid` now; a process or thread that ended in between is left out. */
export function threadsOf(pid: number): ThreadCpu[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch (error) {
    if (ended(error)) return [];
    throw error;
  }
  return tids.flatMap((tid) => {
    try {
      const base = `/proc/${pid}/task/${tid}`;
      const sched = readFileSync(`${base}/sched`, 'utf8');
      return [
        {
          tid: Number(tid),
          name: readFileSync(`${base}/comm`, 'utf8').trim(),
          cpuNs: Number(readFileSync(`${base}/schedstat`, 'utf8').split(' ')[0]),
          migrations: schedField(sched, 'se.nr_migrations'),
          involuntary: schedField(sched, 'nr_involuntary_switches'),
          // stat: pid (comm) state ppid … the 10th field is minflt; comm may hold spaces, so count after ')'.
          minorFaults: Number(readFileSync(`${base}/stat`, 'utf8').split(') ')[1]?.split(' ')[7]),
        },
      ];
    } catch (error) {
      if (ended(error)) return [];
      throw error;
    }
  });
}

/** What each thread of `before` used until `after`, threads started in between counted from zero. */
export function delta(before: ThreadCpu[], after: ThreadCpu[]): ThreadCpu[] {
  const earlier = new Map(before.map((t) => [t.tid, t]));
  return after.map((t) => {
    const b = earlier.get(t.tid);
    return {
      ...t,
      cpuNs: t.cpuNs - (b?.cpuNs ?? 0),
      migrations: t.migrations - (b?.migrations ?? 0),
      involuntary: t.involuntary - (b?.involuntary ?? 0),
      minorFaults: t.minorFaults - (b?.minorFaults ?? 0),
    };
  });
}
