import type { Logger } from 'pino'
import type { QueuedMessage } from '../../protocol/mod.ts'
import type { MessageStore } from '../../stores/read_model/mod.ts'
import type { ScheduleState } from '../../stores/schedule/mod.ts'
import { scheduleStepOf, type ScheduleStep } from './delivery_plan.ts'
import { STATE_RETRY_MS, nak } from './fate.ts'

export interface IntakeDeps {
  readModel: Pick<MessageStore, 'recordQueued' | 'markCanceled' | 'recordSent'>
  schedule: ScheduleState
  log: Logger
}

/**
 * What every delivery of a message does before it looks at its recipients: make sure the message is readable in
 * the read model, and, for a scheduled one, take it up through the schedule state.
 */
export class MessageIntake {
  constructor (private readonly d: IntakeDeps) {}

  /** Records the message (see `recordReadable`), then says whether it goes on now (see `scheduleStep`). */
  async takeUp (msg: QueuedMessage, seq: number): Promise<ScheduleStep> {
    await this.recordReadable(msg, Date.now())
    return await this.scheduleStep(msg, seq)
  }

  /**
   * The gateway records an accepted message in the read model after its 202, a few milliseconds later; a gateway
   * that died in between left no record, and the message would never be readable. Recording is idempotent (a
   * recorded message is left as it is, its status and counts included), so every delivery records it again from
   * the queued message. Redis being away is not a reason to hold the message: the next delivery records it.
   */
  private async recordReadable (msg: QueuedMessage, now: number): Promise<void> {
    const scheduled = msg.scheduled_at !== undefined && Date.parse(msg.scheduled_at) > now
    try {
      await this.d.readModel.recordQueued(msg, scheduled ? 'scheduled' : 'queued')
    } catch (err) {
      this.d.log.warn({ err, message_id: msg.id }, 'recording the message in the read model failed; the next delivery records it')
    }
  }

  /**
   * A scheduled message is taken up only through the schedule state's atomic step: a cancel that won is seen
   * here and the message is dropped unsent; a new time replaces the queued one. A scheduled wait is not an
   * attempt: nothing is recorded and the status stays `scheduled`. `go`: take the message up now; `dueAt` is the
   * time it became due (a reschedule's, else its `scheduled_at`), from which its retry span counts.
   */
  private async scheduleStep (msg: QueuedMessage, seq: number): Promise<ScheduleStep> {
    if (msg.scheduled_at === undefined) return { go: true }
    let verdict
    try {
      verdict = await this.d.schedule.take(msg.id, seq, Date.parse(msg.scheduled_at), Date.now())
    } catch (err) {
      this.d.log.warn({ err, message_id: msg.id }, 'schedule state unavailable; message handed back')
      return { go: false, fate: nak(STATE_RETRY_MS) }
    }
    const step = scheduleStepOf(verdict, Date.now())
    if (step.go) {
      // Sent now, not when it was accepted: the statistics count a scheduled message once it is taken up.
      await this.d.readModel.recordSent(msg, Date.now()).catch((err: unknown) => {
        this.d.log.warn({ err, message_id: msg.id }, 'counting a scheduled message as sent failed')
      })
    }
    if (!step.go && step.canceled === true) {
      // the gateway shows it canceled after the cancel; doing it again here covers a gateway that died in between
      await this.d.readModel.markCanceled(msg.org_id, msg.id).catch((err: unknown) => {
        this.d.log.warn({ err, message_id: msg.id }, 'marking a canceled message in the read model failed')
      })
    }
    return step
  }
}
