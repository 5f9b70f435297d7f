/**
 * When a session Durable Object's alarm must fire next, and keeping it armed for that time. The
 * alarm has three kinds of deadline: a socket reaching the connection lifetime
 * (`MAX_CONNECTION_MINUTES`), a store:false grace window ending (`STORE_FALSE_GRACE_MS`, from the
 * earliest release), and the oldest store:true response expiring (`RESPONSE_RETENTION_DAYS`).
 * Owns the arithmetic (`nextDeadline`, pure) and the arming (`AlarmClock`).
 * Invariants: the alarm is never set later than the earliest deadline (a late alarm would stretch
 * a lifetime, a window or a retention); it is only moved earlier, never re-set to a later time by
 * a request (the alarm handler re-arms after it ran); storage is read at most once per instance.
 * Source: https://developers.cloudflare.com/durable-objects/api/alarms/
 */

/** What the next deadline depends on. Times in ms since the epoch, durations in ms. */
export interface DeadlineInputs {
  /** Accept times of the open sockets. */
  socketsOpenedAt: Iterable<number>;
  maxConnectionMs: number;
  /** Creation time of the oldest store:true response, null when there is none. */
  oldestStored: number | null;
  retentionMs: number;
  /** Earliest release of a store:false scope not purged yet, null when there is none. */
  earliestRelease: number | null;
  storeFalseGraceMs: number;
}

/** The earliest deadline, or null when nothing is due ever (no socket, nothing stored or released). */
export function nextDeadline(inputs: DeadlineInputs): number | null {
  let earliest = Number.POSITIVE_INFINITY;
  for (const openedAt of inputs.socketsOpenedAt) {
    earliest = Math.min(earliest, openedAt + inputs.maxConnectionMs);
  }
  if (inputs.oldestStored !== null) earliest = Math.min(earliest, inputs.oldestStored + inputs.retentionMs);
  if (inputs.earliestRelease !== null) {
    earliest = Math.min(earliest, inputs.earliestRelease + inputs.storeFalseGraceMs);
  }
  return earliest === Number.POSITIVE_INFINITY ? null : earliest;
}

/** Whether an alarm armed for `armed` (null: none) must be moved to `deadline`. */
export function mustArm(armed: number | null, deadline: number): boolean {
  return armed === null || armed > deadline;
}

/** The alarm of one Durable Object, armed for the earliest deadline. */
export class AlarmClock {
  private readonly storage: DurableObjectStorage;
  /**
   * The alarm time this instance last set or read, null when none is set, undefined before it
   * read it: every request re-arms the alarm, and reading it back from storage each time would put
   * a storage round trip on every request.
   */
  private armedAt: number | null | undefined = undefined;

  constructor(storage: DurableObjectStorage) {
    this.storage = storage;
  }

  /** The alarm fired: none is set until the next `arm`. */
  fired(): void {
    this.armedAt = null;
  }

  /** Arms the alarm for `deadline` unless it is already due earlier (null: nothing to arm). */
  async arm(deadline: number | null): Promise<void> {
    if (deadline === null) return;
    if (this.armedAt === undefined) this.armedAt = await this.storage.getAlarm();
    if (!mustArm(this.armedAt, deadline)) return;
    this.armedAt = deadline; // before the await, so a concurrent request does not arm a later one
    await this.storage.setAlarm(deadline);
  }
}
