import { createServer, connect } from 'node:net'
import { eventually } from './waiting.ts'

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

/** Resolves once something accepts connections on `port`. */
export async function waitForPort (port: number, timeoutMs = 10_000): Promise<void> {
  const listening = async (): Promise<boolean> => await new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1')
    s.once('connect', () => { s.destroy(); resolve(true) })
    s.once('error', () => resolve(false))
  })
  await eventually(listening, `something to listen on port ${port}`, timeoutMs, 50)
}
