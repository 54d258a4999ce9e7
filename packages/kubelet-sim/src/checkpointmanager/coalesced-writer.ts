// Keeps one checkpoint up to date without putting disk writes on the caller's path (the
// simulator's own; the kubelet writes synchronously). `request()` only marks the checkpoint dirty;
// one writer runs after the current turn of the event loop, takes the state at that moment and
// writes it through the checkpoint manager, so a burst of changes costs one write. Writes never
// overlap, so they land in order and the last state wins. `flush()` resolves once every change
// requested so far is on disk; `read()` flushes before it reads the checkpoint back.

import type { CheckpointManager } from './checkpoint-manager.js';

export class CoalescedCheckpointWriter {
  private dirty = false;
  private writing: Promise<void> | null = null;

  constructor(
    private readonly manager: CheckpointManager,
    private readonly key: string,
    /** The checkpoint's current content; called when a write starts, not when it is requested. */
    private readonly snapshot: () => string,
    private readonly onError: (err: unknown) => void,
  ) {}

  request(): void {
    this.dirty = true;
    this.writing ??= this.drain();
  }

  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  async read(): Promise<string | null> {
    await this.flush();
    return this.manager.getCheckpoint(this.key);
  }

  private async drain(): Promise<void> {
    try {
      // Let the rest of the burst (this turn's messages) mark the state dirty first.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.dirty) {
        this.dirty = false;
        try {
          await this.manager.createCheckpoint(this.key, this.snapshot());
        } catch (err) {
          this.onError(err);
        }
      }
    } finally {
      this.writing = null;
    }
  }
}
