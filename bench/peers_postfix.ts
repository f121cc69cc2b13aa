import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort, waitForPort } from '../test/helpers/ports.ts'
import { childrenOf, readStat } from './peers_cpu.ts'

/**
 * A private Postfix instance with OpenDKIM as its milter, from Debian's packages, for the side-by-side benchmark.
 * Its own config directory, queue directory and data directory under a temporary directory, started with
 * `postfix -c <dir> start`; the system-wide Postfix (/etc/postfix, /var/spool/postfix) is never read from or
 * written to, except that a package install that starts it is followed by stopping it.
 */
const run = promisify(execFile)
const POSTFIX = '/usr/sbin/postfix'
const OPENDKIM = '/usr/sbin/opendkim'
const MASTER = '/usr/lib/postfix/sbin/master'
const PACKAGES = ['postfix', 'opendkim', 'opendkim-tools']

const installed = (): boolean => [POSTFIX, OPENDKIM, MASTER].every((f) => existsSync(f))

/**
 * Installs the packages when they are missing and this process is root; the reason the benchmark must be skipped
 * otherwise. `say` announces what is done to the machine (stderr).
 */
export async function ensurePostfix (say: (line: string) => void): Promise<string | undefined> {
  if (installed()) return undefined
  if (process.getuid?.() !== 0) return `Postfix or OpenDKIM is not installed (${PACKAGES.join(', ')}) and the bench is not root`
  say(`peers: installing ${PACKAGES.join(' ')} from Debian's packages (apt-get); the system-wide instance is stopped afterwards`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  try {
    // "No configuration": the package writes no /etc/postfix/main.cf and so does not start the system-wide instance.
    await new Promise<void>((resolve, reject) => {
      const c = spawn('debconf-set-selections', [], { stdio: ['pipe', 'ignore', 'ignore'] })
      c.once('error', reject)
      c.once('exit', () => resolve())
      c.stdin.end('postfix postfix/main_mailer_type select No configuration\n')
    }).catch(() => {})
    const install = async (): Promise<unknown> => await run('apt-get', ['install', '-y', ...PACKAGES], { env, maxBuffer: 64 << 20 })
    await install().catch(async () => {
      await run('apt-get', ['update'], { env, maxBuffer: 64 << 20 })
      await install()
    })
  } catch (err) {
    const said = String((err as { stderr?: string }).stderr ?? err).trim().split('\n').slice(-2).join(' ')
    return `apt-get install ${PACKAGES.join(' ')} failed: ${said}`
  }
  await stopSystemInstances(say)
  return installed() ? undefined : `apt-get installed ${PACKAGES.join(', ')} but ${POSTFIX}, ${MASTER} or ${OPENDKIM} is missing`
}

/** What a package install may have started: the default instance and the system's opendkim. */
async function stopSystemInstances (say: (line: string) => void): Promise<void> {
  if (existsSync('/etc/postfix/main.cf')) {
    const running = await run(POSTFIX, ['status']).then(() => true, () => false)
    if (running) { say('peers: stopping the system-wide Postfix the install started'); await run(POSTFIX, ['stop']).catch(() => {}) }
  }
  for (const pidFile of ['/run/opendkim/opendkim.pid', '/var/run/opendkim/opendkim.pid']) {
    const pid = Number(existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim() : NaN)
    if (Number.isInteger(pid) && pid > 0) {
      say(`peers: stopping the system's opendkim (${pid}) the install started`)
      try { process.kill(pid, 'SIGTERM') } catch {}
    }
  }
}

export interface PostfixInstance {
  /** The port Postfix's smtpd listens on (127.0.0.1). */
  port: number
  domain: string
  dir: string
  /** Postfix's master process (it forks every other Postfix process), and opendkim. */
  masterPid: () => number | undefined
  opendkimPid: () => number | undefined
  /** Every process of the instance now: master, its children, opendkim. */
  pids: () => number[]
  /** Queue files not yet delivered (incoming, active, deferred, hold). */
  queued: () => number
  /** SIGKILL every process of the instance at once: master first, so nothing new is forked. */
  kill: () => Promise<void>
  start: () => Promise<void>
  close: () => Promise<void>
  /** The end of Postfix's own log, for a failure message. */
  logTail: () => string
}

function mainCf (o: { dir: string, queue: string, data: string, log: string, sinkPort: number, milterPort: number }): string {
  return [
    '# Written by the Outbox peers benchmark: a private instance, nothing shared with /etc/postfix.',
    'compatibility_level = 3.6',
    `queue_directory = ${o.queue}`,
    `data_directory = ${o.data}`,
    // No syslog in a container: Postfix logs to a file, which must lie under one of these prefixes.
    `maillog_file = ${o.log}`,
    `maillog_file_prefixes = ${o.dir}`,
    'myhostname = postfix.bench.test',
    'mydomain = bench.test',
    'myorigin = $myhostname',
    'mydestination =',
    'local_recipient_maps =',
    'alias_maps =',
    'alias_database =',
    'inet_protocols = ipv4',
    'inet_interfaces = 127.0.0.1',
    'mynetworks = 127.0.0.0/8',
    'smtpd_relay_restrictions = permit_mynetworks, reject',
    `relayhost = [127.0.0.1]:${o.sinkPort}`,
    // As Outbox speaks to its relay: STARTTLS when offered, the certificate not checked.
    'smtp_tls_security_level = may',
    `smtpd_milters = inet:127.0.0.1:${o.milterPort}`,
    'non_smtpd_milters = $smtpd_milters',
    // A message the milter could not sign is refused with 451, never relayed unsigned.
    'milter_default_action = tempfail',
    'biff = no',
    'append_dot_mydomain = no',
    ''
  ].join('\n')
}

function masterCf (port: number): string {
  // Debian's stock services without chroot (the private queue has no chroot tree), less local delivery.
  const rows = [
    `127.0.0.1:${port} inet n - n - - smtpd`,
    'pickup unix n - n 60 1 pickup',
    'cleanup unix n - n - 0 cleanup',
    'qmgr unix n - n 300 1 qmgr',
    'tlsmgr unix - - n 1000? 1 tlsmgr',
    'rewrite unix - - n - - trivial-rewrite',
    'bounce unix - - n - 0 bounce',
    'defer unix - - n - 0 bounce',
    'trace unix - - n - 0 bounce',
    'verify unix - - n - 1 verify',
    'flush unix n - n 1000? 0 flush',
    'proxymap unix - - n - - proxymap',
    'proxywrite unix - - n - 1 proxymap',
    'smtp unix - - n - - smtp',
    'relay unix - - n - - smtp',
    'showq unix n - n - - showq',
    'error unix - - n - - error',
    'retry unix - - n - - error',
    'discard unix - - n - - discard',
    'anvil unix - - n - 1 anvil',
    'scache unix - - n - 1 scache',
    'postlog unix-dgram n - n - 1 postlogd'
  ]
  return rows.join('\n') + '\n'
}

function opendkimConf (o: { domain: string, key: string, port: number, pidFile: string }): string {
  return [
    'Syslog no',
    'Mode s',
    `Domain ${o.domain}`,
    'Selector bench',
    `KeyFile ${o.key}`,
    `Socket inet:${o.port}@127.0.0.1`,
    `PidFile ${o.pidFile}`,
    'Canonicalization relaxed/relaxed',
    'SignatureAlgorithm rsa-sha256',
    'OversignHeaders From',
    // Mail from Postfix's smtpd comes from 127.0.0.1, the default internal host: it is signed.
    'InternalHosts 127.0.0.1',
    // The key lives in a temporary directory the bench made; the ownership check is for system-wide keys.
    'RequireSafeKeys false',
    ''
  ].join('\n')
}

export async function startPostfix (opts: { domain: string, sinkPort: number }): Promise<PostfixInstance> {
  const dir = mkdtempSync(join(tmpdir(), 'outbox-peers-postfix-'))
  // Postfix's daemons run as the postfix user and must reach the queue through this directory.
  chmodSync(dir, 0o755)
  const etc = join(dir, 'etc')
  const queue = join(dir, 'queue')
  const dkimDir = join(dir, 'opendkim')
  for (const d of [etc, queue, dkimDir]) mkdirSync(d, { mode: 0o755 })
  const [port, milterPort] = [await freePort(), await freePort()]
  const log = join(dir, 'maillog')
  writeFileSync(join(etc, 'main.cf'), mainCf({ dir, queue, data: join(dir, 'data'), log, sinkPort: opts.sinkPort, milterPort }))
  writeFileSync(join(etc, 'master.cf'), masterCf(port))
  const key = join(dkimDir, 'bench.private')
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 })
  writeFileSync(key, pair.privateKey.export({ type: 'pkcs1', format: 'pem' }), { mode: 0o600 })
  const dkimConf = join(dkimDir, 'opendkim.conf')
  writeFileSync(dkimConf, opendkimConf({ domain: opts.domain, key, port: milterPort, pidFile: join(dkimDir, 'opendkim.pid') }))
  let opendkim: ChildProcess | undefined
  let stopped = false
  const masterPid = (): number | undefined => {
    const f = join(queue, 'pid', 'master.pid')
    const pid = existsSync(f) ? Number(readFileSync(f, 'utf8').trim()) : NaN
    return Number.isInteger(pid) && pid > 0 && existsSync(`/proc/${pid}`) ? pid : undefined
  }
  const alive = (c: ChildProcess | undefined): c is ChildProcess => c !== undefined && c.exitCode === null && c.signalCode === null
  const pids = (): number[] => {
    const m = masterPid()
    return [...(m !== undefined ? [m, ...childrenOf(m)] : []), ...(alive(opendkim) && opendkim.pid !== undefined ? [opendkim.pid] : [])]
  }
  const start = async (): Promise<void> => {
    // Foreground (-f), so that its process is this bench's child: killed with the rest, and never left behind.
    opendkim = spawn(OPENDKIM, ['-f', '-x', dkimConf], { stdio: ['ignore', 'ignore', 'pipe'] })
    let dkimErr = ''
    opendkim.stderr!.on('data', (d: Buffer) => { dkimErr += d.toString() })
    const dkim = opendkim
    await Promise.race([
      waitForPort(milterPort),
      new Promise((_resolve, reject) => dkim.once('exit', (c) => reject(new Error(`opendkim exited with ${c}: ${dkimErr.trim()}`))))
    ])
    try {
      await run(POSTFIX, ['-c', etc, 'start'], { env: { ...process.env, MAIL_CONFIG: etc } })
    } catch (err) {
      throw new Error(`postfix -c ${etc} start failed: ${String((err as { stderr?: string }).stderr ?? err).trim()}; log: ${tail(log)}`)
    }
    await waitForPort(port)
  }
  const kill = async (): Promise<void> => {
    const m = masterPid()
    const all = pids()
    if (m !== undefined) signal(m, 'SIGKILL')
    for (const pid of all) signal(pid, 'SIGKILL')
    // A child forked between the listing and the master's death would be left: list once more.
    for (const pid of m !== undefined ? childrenOf(m) : []) signal(pid, 'SIGKILL')
    const d = opendkim
    if (alive(d)) await new Promise<void>((resolve) => { d.once('exit', () => resolve()); signal(d.pid!, 'SIGKILL') })
    const deadline = Date.now() + 5000
    while (all.some((pid) => !gone(pid)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  try {
    await start()
  } catch (err) {
    await kill()
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  return {
    port,
    domain: opts.domain,
    dir,
    masterPid,
    opendkimPid: () => alive(opendkim) ? opendkim.pid : undefined,
    pids,
    queued: () => ['incoming', 'active', 'deferred', 'hold', 'maildrop'].reduce((n, q) => n + countFiles(join(queue, q)), 0),
    kill,
    start,
    logTail: () => tail(log),
    close: async () => {
      if (stopped) return
      stopped = true
      if (masterPid() !== undefined) await run(POSTFIX, ['-c', etc, 'stop'], { env: { ...process.env, MAIL_CONFIG: etc } }).catch(() => {})
      await kill()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

function signal (pid: number, s: NodeJS.Signals): void {
  try { process.kill(pid, s) } catch {}
}

/** Gone, or a zombie no one reaps yet (a killed master's children are reparented). */
const gone = (pid: number): boolean => (readStat(pid)?.state ?? 'Z') === 'Z'

function countFiles (dir: string): number {
  if (!existsSync(dir)) return 0
  let n = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? countFiles(join(dir, e.name)) : 1
  return n
}

function tail (file: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').slice(-5).join(' | ') : '(no log)'
}
