// A source that polls on a timer, written once: start() polls at once; each poll answers how long
// to wait before the next; pollSoon() brings the next poll forward (something just changed) — also
// when it comes while a poll is in flight, whose answer may predate the change; stop() ends the
// loop, and a poll in flight when it stopped schedules nothing. The timer is
// unref'd: a polling source never holds a stopping gateway's process.

export class PollLoop {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private polling = false;
  /** A pollSoon() delay asked for while a poll was in flight. */
  private soonAfterPoll: number | null = null;

  /** `poll` answers the delay in ms before the next poll. */
  constructor(private readonly poll: () => Promise<number>) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Poll again after `delayMs` instead of when the last poll said. */
  pollSoon(delayMs: number): void {
    if (this.stopped) return;
    if (this.polling) this.soonAfterPoll = Math.min(this.soonAfterPoll ?? delayMs, delayMs);
    else this.schedule(delayMs);
  }

  private schedule(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.run();
    }, delayMs);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    if (this.stopped) return;
    this.polling = true;
    let next: number;
    try {
      next = await this.poll();
    } finally {
      this.polling = false;
    }
    const soon = this.soonAfterPoll;
    this.soonAfterPoll = null;
    if (!this.stopped) this.schedule(soon === null ? next : Math.min(next, soon));
  }
}
