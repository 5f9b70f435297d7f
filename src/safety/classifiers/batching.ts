/**
 * Cross-session micro-batching: classifier calls from every session Durable Object in one
 * isolate are gathered for at most `waitMs` (or until `maxTexts` texts) and sent as one call.
 * Off by default (the policy's `batch_wait_ms` is 0): it trades a bounded wait on the critical path for
 * fewer calls per second to the classifier, which pays only under many concurrent sessions per
 * isolate; the safety benchmark measures both sides (bench/safety.ts).
 * Owns the per-isolate queues (module state, one per classifier id and direction).
 * Invariants: each caller gets exactly its own verdicts, in order; a caller's timeout rejects only
 * that caller; a failed batch fails every caller in it (as `ClassifierUnavailable`); a flagged
 * verdict of a `combined` classifier stays combined (it is not per text).
 */
import { type Classifier, ClassifierUnavailable, type Direction, type Verdict } from "../classifier.ts";

interface Waiter {
  texts: readonly string[];
  resolve: (verdicts: Verdict[]) => void;
  reject: (cause: unknown) => void;
  signal: AbortSignal;
}

/** One queue: the waiters of one (classifier, direction). */
class BatchQueue {
  private waiters: Waiter[] = [];
  private texts = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly inner: Classifier;
  private readonly direction: Direction;
  private readonly waitMs: number;
  private readonly maxTexts: number;

  constructor(inner: Classifier, direction: Direction, waitMs: number, maxTexts: number) {
    this.inner = inner;
    this.direction = direction;
    this.waitMs = waitMs;
    this.maxTexts = maxTexts;
  }

  add(waiter: Waiter): void {
    this.waiters.push(waiter);
    this.texts += waiter.texts.length;
    if (this.texts >= this.maxTexts) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.waitMs);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const waiters = this.waiters.filter((w) => !w.signal.aborted);
    this.waiters = [];
    this.texts = 0;
    if (waiters.length === 0) return;
    const controller = new AbortController();
    const abortIfAllGone = () => {
      if (waiters.every((w) => w.signal.aborted)) controller.abort();
    };
    for (const w of waiters) w.signal.addEventListener("abort", abortIfAllGone, { once: true });
    this.inner
      .classify(
        waiters.flatMap((w) => w.texts),
        this.direction,
        controller.signal,
      )
      .then(
        (verdicts) => {
          let offset = 0;
          for (const w of waiters) {
            w.resolve(verdicts.slice(offset, offset + w.texts.length));
            offset += w.texts.length;
          }
        },
        (cause: unknown) => {
          for (const w of waiters) w.reject(cause);
        },
      );
  }
}

/** Isolate-wide queues by classifier id and direction. */
const queues = new Map<string, BatchQueue>();

/** `inner` (a remote classifier: local ones gain nothing) with its calls micro-batched across the sessions of this isolate. */
export class BatchingClassifier implements Classifier {
  readonly id: string;
  readonly model: string;
  readonly local: boolean;
  readonly combined: boolean;
  private readonly inner: Classifier;
  private readonly waitMs: number;
  private readonly maxTexts: number;

  constructor(inner: Classifier, waitMs: number, maxTexts: number) {
    this.inner = inner;
    this.id = inner.id;
    this.model = inner.model;
    this.local = inner.local;
    // Several callers' texts judged together: only a per-text classifier stays per text.
    this.combined = inner.combined;
    this.waitMs = waitMs;
    this.maxTexts = maxTexts;
  }

  classify(texts: readonly string[], direction: Direction, signal: AbortSignal): Promise<Verdict[]> {
    const key = `${this.inner.id}|${direction}|${this.waitMs}|${this.maxTexts}`;
    let queue = queues.get(key);
    if (!queue) {
      queue = new BatchQueue(this.inner, direction, this.waitMs, this.maxTexts);
      queues.set(key, queue);
    }
    return new Promise<Verdict[]>((resolve, reject) => {
      if (signal.aborted) {
        reject(new ClassifierUnavailable("timeout", "The safety classifier timed out."));
        return;
      }
      signal.addEventListener(
        "abort",
        () => reject(new ClassifierUnavailable("timeout", "The safety classifier timed out.")),
        { once: true },
      );
      queue.add({ texts, resolve, reject, signal });
    });
  }
}
