import { MAX_TAGS, isStreamId, isTag, uniqueTags } from '../../protocol/mod.ts'
import { READ_MODEL_KEYS as K, type Environment } from './message_store_keys.ts'

/**
 * The per-tag indexes of the read model, per environment like the others (a tag filter on the live view never shows
 * sandbox traffic). A message has at most 10 tags, so recording it or one of its events touches at most 10 more
 * sorted sets and 10 more hourly counter hashes, kept exactly as long as the untagged ones.
 */

/**
 * The message's tag indexes (appended after its other indexes) and its tag stats hashes for one hour, then its
 * stream's index and stats hash: the scripts keep a stream exactly as a tag (one more index, one more hash).
 */
export function messageTagKeys (
  orgId: string, env: Environment, tags: readonly string[] | undefined, hour: string, stream?: string
): { indexes: string[], stats: string[] } {
  const unique = uniqueTags(tags).filter(isTag)
  const indexes = unique.map((t) => K.messagesTagged(orgId, env, t))
  const stats = unique.map((t) => K.statsTagged(orgId, env, t, hour))
  if (isStreamId(stream)) {
    indexes.push(K.messagesInStream(orgId, env, stream))
    stats.push(K.statsInStream(orgId, env, stream, hour))
  }
  return { indexes, stats }
}

/** The stream an event carries in `data.stream`, when it is a stream id (key names never come from unchecked values). */
export function eventStream (data: Record<string, unknown>): string | undefined {
  return isStreamId(data.stream) ? data.stream : undefined
}

/** Like eventTagKeys, for the event's stream: its live then sandbox (event index, stats hash). */
export function eventStreamKeys (orgId: string, stream: string, hour: string): string[] {
  return [K.eventsInStream(orgId, 'live', stream), K.statsInStream(orgId, 'live', stream, hour),
    K.eventsInStream(orgId, 'test', stream), K.statsInStream(orgId, 'test', stream, hour)]
}

/**
 * The tags an event carries in `data.tags`, each once; anything that is not a tag is ignored (events reach the
 * read model from the stream, and a key name must never come from an unchecked value).
 */
export function eventTags (data: Record<string, unknown>): string[] {
  const raw = data.tags
  if (!Array.isArray(raw)) return []
  return uniqueTags(raw.filter(isTag)).slice(0, MAX_TAGS)
}

/**
 * Per tag, the live then the sandbox (tag event index, tag stats hash) for apply_event.lua, flat: the script
 * picks the pair of the message's environment, which only the message hash knows.
 */
export function eventTagKeys (orgId: string, tags: readonly string[], hour: string): string[] {
  const out: string[] = []
  for (const t of tags) {
    out.push(K.eventsTagged(orgId, 'live', t), K.statsTagged(orgId, 'live', t, hour))
    out.push(K.eventsTagged(orgId, 'test', t), K.statsTagged(orgId, 'test', t, hour))
  }
  return out
}

/** Whether an item read back carries the tag (for a filter the chosen index does not cover). */
export function hasTag (tags: unknown, tag: string): boolean {
  return Array.isArray(tags) && tags.includes(tag)
}
