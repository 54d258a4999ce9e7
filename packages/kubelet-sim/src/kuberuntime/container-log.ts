// A simulated container's log (what the container runtime keeps under /var/log/pods and the
// kubelet serves through `pods/{name}/log`): the lines of the running instance and of the previous
// one (`--previous`), bounded, with followers for `--follow`. Nothing really runs, so the lines are
// what the workload would see and say: its device environment from the plugin's Allocate response,
// its CPUs and memory, and why it exits.

export interface LogLine {
  time: Date;
  text: string;
}

/** Lines kept per container instance (the runtime rotates logs; 10 MiB by default upstream). */
const MAX_LINES = 2000;

export type LogFollower = (line: LogLine | null) => void;

export class ContainerLog {
  private lines: LogLine[] = [];
  private prev: LogLine[] | null = null;
  private readonly followers = new Set<LogFollower>();
  private ended = false;

  /** A new instance of the container starts: the current lines become the previous instance's. */
  rotate(): void {
    this.prev = this.lines;
    this.lines = [];
    this.ended = false;
  }

  write(text: string, time: Date = new Date()): void {
    const line = { time, text };
    this.lines.push(line);
    if (this.lines.length > MAX_LINES) this.lines.splice(0, this.lines.length - MAX_LINES);
    for (const f of this.followers) f(line);
  }

  /** The running instance exited (or was stopped): followers see the end of the stream. */
  end(): void {
    this.ended = true;
    for (const f of this.followers) f(null);
    this.followers.clear();
  }

  get running(): boolean {
    return !this.ended;
  }

  current(): readonly LogLine[] {
    return this.lines;
  }

  previous(): readonly LogLine[] | null {
    return this.prev;
  }

  /** Calls `f` with every new line of the running instance, then `null` when it ends. */
  follow(f: LogFollower): () => void {
    if (this.ended) {
      f(null);
      return () => undefined;
    }
    this.followers.add(f);
    return () => this.followers.delete(f);
  }
}
