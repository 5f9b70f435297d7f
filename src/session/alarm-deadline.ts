/**
 * Keeping a session Durable Object's one alarm armed for the earliest deadline of its parts (each
 * part says when it next needs the alarm: lifecycle.ts `SessionPart.nextDeadline`; the parts and
 * their deadlines are listed in session-parts.ts). Owns the arming rule (`mustArm`, pure) and the
 * arming (`AlarmClock`).
 * Invariants: the alarm is never set later than the earliest deadline (a late alarm would stretch
 * a lifetime, a window or a retention); it is only moved earlier, never re-set to a later time by
 * a request (the alarm handler re-arms after it ran); storage is read at most once per instance.
 * Source: https://developers.cloudflare.com/durable-objects/api/alarms/
 */

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
