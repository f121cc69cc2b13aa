import { STATUS_CODES } from 'node:http'

const cache = new Map<number, string>()

/** uWS wants the whole status line ("202 Accepted"); build each one once. */
export function statusLine (status: number): string {
  let line = cache.get(status)
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`
    cache.set(status, line)
  }
  return line
}
