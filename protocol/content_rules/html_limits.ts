import { Parser, type Handler, type ParserOptions } from 'htmlparser2'

/**
 * Bounds on parsing HTML that someone else wrote (the analyze endpoint, click rewriting, inbound mail).
 *
 * htmlparser2 keeps its open elements in an array it grows with `unshift()` and searches with `indexOf()` on every
 * end tag, so its work grows with nesting depth × elements: 200,000 nested `<div>` (1 MB) kept it busy for 16 s,
 * 50,000 for 2 s. Past the depth limit the parse stops, which keeps that array short and every step cheap; the
 * element limit and the time budget bound what is left (many flat elements, unmatched end tags, a slow machine).
 * The parser is fed in slices so the clock is read between slices, whatever the input holds.
 */
export interface HtmlLimits {
  /** Open elements at once. Blink's HTML parser nests no deeper than 512 either. */
  readonly maxDepth: number
  /** Elements in the whole document; a large newsletter has a few thousand. */
  readonly maxElements: number
  /** Attributes on one element; real markup has a handful. */
  readonly maxAttributes: number
  /** Wall time for one parse. */
  readonly timeBudgetMs: number
}

export const HTML_LIMITS: HtmlLimits = Object.freeze({
  maxDepth: 512,
  maxElements: 50_000,
  maxAttributes: 1000,
  timeBudgetMs: 1000 // 1 s
})

/** Which limit stopped a parse. */
export type HtmlLimit = 'depth' | 'elements' | 'attributes' | 'time'

const SLICE_CHARS = 16 * 1024
/** Elements (or attributes) between two reads of the clock. */
const CLOCK_EVERY = 256

/**
 * Runs htmlparser2 over `html` with the handler `build` returns (it receives the parser, for `startIndex` and
 * `endIndex`). Returns undefined when the whole document was parsed, else the limit that stopped it: no callback
 * runs after that point, `onend` included, and the caller decides what a partial parse is worth.
 */
export function parseHtmlWithin (
  html: string, build: (parser: Parser) => Partial<Handler>, options: ParserOptions, limits: HtmlLimits = HTML_LIMITS
): HtmlLimit | undefined {
  const started = performance.now()
  let depth = 0
  let elements = 0
  let attributes = 0
  let attributesHere = 0
  let stopped: HtmlLimit | undefined
  let cbs: Partial<Handler> = {}
  const stop = (limit: HtmlLimit): void => {
    stopped = limit
    parser.pause()
  }
  const parser: Parser = new Parser({
    onopentagname (name) {
      if (stopped !== undefined) return
      depth++
      elements++
      if (depth > limits.maxDepth) return stop('depth')
      if (elements > limits.maxElements) return stop('elements')
      if (elements % CLOCK_EVERY === 0 && performance.now() - started > limits.timeBudgetMs) return stop('time')
      attributesHere = 0
      cbs.onopentagname?.(name)
    },
    onattribute (name, value, quote) {
      if (stopped !== undefined) return
      if (++attributesHere > limits.maxAttributes) return stop('attributes')
      // A tag may still carry many attributes: the clock is read inside it too.
      if (++attributes % CLOCK_EVERY === 0 && performance.now() - started > limits.timeBudgetMs) return stop('time')
      cbs.onattribute?.(name, value, quote)
    },
    onopentag (name, attribs, isImplied) { if (stopped === undefined) cbs.onopentag?.(name, attribs, isImplied) },
    onclosetag (name, isImplied) {
      if (stopped !== undefined) return
      depth--
      cbs.onclosetag?.(name, isImplied)
    },
    ontext (data) { if (stopped === undefined) cbs.ontext?.(data) },
    onend () { if (stopped === undefined) cbs.onend?.() }
  }, options)
  cbs = build(parser)
  for (let at = 0; at < html.length; at += SLICE_CHARS) {
    parser.write(html.slice(at, at + SLICE_CHARS))
    if (stopped !== undefined) return stopped
    if (performance.now() - started > limits.timeBudgetMs) return 'time'
  }
  parser.end()
  return stopped
}
