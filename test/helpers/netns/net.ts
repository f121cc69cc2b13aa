import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { binary } from '../servers.ts'

/**
 * Hosts with addresses of their own on one machine: one network namespace per host, each joined to a bridge in
 * the root namespace by a veth pair, all in one /24. The root namespace holds the bridge's own address (`.1`),
 * where the test process itself is a host: it sends through the gateways and runs the SMTP sink. A host's link
 * is cut by setting its root-side veth down (the host stays alive, its sockets open, nothing crosses the link)
 * and healed by setting it up again; packet loss is an nft rule inside the host.
 *
 * Names carry the test process's pid (`obl<pid>…`), so `scripts/netns_lab.sh clean` can find what a killed test
 * left behind, and two test processes never share a name.
 */

/** The prefix of every namespace, bridge and veth the harness makes. */
export const NAME_PREFIX = 'obl'

export interface Host {
  name: string
  /** The network namespace: `ip netns exec <ns> …` runs a command on the host. */
  ns: string
  address: string
  /** The root-side end of the host's veth pair: down cuts the host off. */
  veth: string
}

function ip (...args: string[]): string {
  return execFileSync(binary('ip'), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

/** Why hosts cannot be made here, or undefined when they can (root, the `ip` tool, namespaces in the kernel). */
export function netnsUnavailable (): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces need Linux'
  if (process.getuid?.() !== 0) return 'making network namespaces and veth links needs root (run the test as root)'
  if (!existsSync(binary('ip'))) return 'the `ip` tool (iproute2) is not installed'
  if (!existsSync('/proc/self/ns/net')) return 'the kernel has no network namespaces'
  return undefined
}

/** Why nft rules (packet loss) cannot be set here, or undefined. */
export function nftUnavailable (): string | undefined {
  return existsSync(binary('nft')) ? undefined : 'the `nft` tool is not installed (Debian package nftables)'
}

export class Net {
  readonly hosts = new Map<string, Host>()
  private readonly bridge: string
  private readonly prefix: string
  private disposed = false
  private readonly onExit = (): void => { this.dispose() }

  private constructor (readonly tag: string, subnet: number) {
    this.bridge = `${NAME_PREFIX}${tag}`
    this.prefix = `10.213.${subnet}`
  }

  /**
   * A bridge with address `10.213.<n>.1/24`, n chosen from the pid and moved on while a /24 is in use by
   * another interface of the machine.
   */
  static create (): Net {
    const used = ip('-4', '-o', 'addr', 'show')
    let subnet = process.pid % 250
    while (used.includes(`10.213.${subnet}.`)) subnet = (subnet + 1) % 250
    const net = new Net(String(process.pid), subnet)
    // a test that dies before its `after` hook still takes its namespaces with it
    process.once('exit', net.onExit)
    try {
      ip('link', 'add', net.bridge, 'type', 'bridge')
      ip('addr', 'add', `${net.rootAddress}/24`, 'dev', net.bridge)
      ip('link', 'set', net.bridge, 'up')
    } catch (err) {
      net.dispose()
      throw err
    }
    return net
  }

  /** The test process's own address on the bridge. */
  get rootAddress (): string {
    return `${this.prefix}.1`
  }

  /** A host named `name` at `<prefix>.<octet>` with its loopback up. */
  addHost (name: string, octet: number): Host {
    const ns = `${NAME_PREFIX}${this.tag}-${name}`
    const veth = `${NAME_PREFIX}${this.tag}v${octet}`
    const peer = `${NAME_PREFIX}${this.tag}p${octet}`
    const host: Host = { name, ns, address: `${this.prefix}.${octet}`, veth }
    this.hosts.set(name, host)
    ip('netns', 'add', ns)
    ip('link', 'add', veth, 'type', 'veth', 'peer', 'name', peer)
    ip('link', 'set', peer, 'netns', ns)
    ip('link', 'set', veth, 'master', this.bridge)
    ip('link', 'set', veth, 'up')
    ip('-n', ns, 'link', 'set', 'lo', 'up')
    ip('-n', ns, 'link', 'set', peer, 'name', 'eth0')
    ip('-n', ns, 'addr', 'add', `${host.address}/24`, 'dev', 'eth0')
    ip('-n', ns, 'link', 'set', 'eth0', 'up')
    return host
  }

  host (name: string): Host {
    const h = this.hosts.get(name)
    if (h === undefined) throw new Error(`no host ${name}`)
    return h
  }

  /** Cuts the host off: its end of the bridge goes down; processes on it keep running with their sockets open. */
  cut (name: string): void {
    ip('link', 'set', this.host(name).veth, 'down')
  }

  heal (name: string): void {
    ip('link', 'set', this.host(name).veth, 'up')
  }

  /**
   * Partitions host `name` from hosts `others` only (each keeps its link to everyone else): blackhole routes on
   * both sides, so neither's packets reach the other while both still serve the rest of the network.
   */
  partition (name: string, others: string[]): void {
    const h = this.host(name)
    for (const o of others.map((n) => this.host(n))) {
      ip('-n', h.ns, 'route', 'add', 'blackhole', `${o.address}/32`)
      ip('-n', o.ns, 'route', 'add', 'blackhole', `${h.address}/32`)
    }
  }

  unpartition (name: string, others: string[]): void {
    const h = this.host(name)
    for (const o of others.map((n) => this.host(n))) {
      ip('-n', h.ns, 'route', 'del', 'blackhole', `${o.address}/32`)
      ip('-n', o.ns, 'route', 'del', 'blackhole', `${h.address}/32`)
    }
  }

  /** Packets the loss rule of host `name` dropped so far (read before the rule is removed). */
  droppedPackets (name: string): number {
    const out = execFileSync(binary('ip'), ['netns', 'exec', this.host(name).ns, binary('nft'), 'list', 'table', 'inet', 'obloss'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    return Number(/counter packets (\d+)/.exec(out)?.[1] ?? 0)
  }

  /**
   * Drops `percent` % of the packets the host receives, chosen at random per packet (an nft `numgen random`
   * rule in the host's own namespace); 0 removes the rule.
   */
  loss (name: string, percent: number): void {
    const ns = this.host(name).ns
    const nft = (script: string): void => {
      execFileSync(binary('ip'), ['netns', 'exec', ns, binary('nft'), '-f', '-'], { input: script, stdio: ['pipe', 'ignore', 'pipe'] })
    }
    nft('table inet obloss\ndelete table inet obloss\n')
    if (percent <= 0) return
    nft([
      'table inet obloss {',
      '  chain input { type filter hook input priority 0; policy accept;',
      `    numgen random mod 100 < ${percent} counter drop`,
      '  }',
      '}',
      ''
    ].join('\n'))
  }

  /** Deletes every namespace and the bridge (their veths go with them). Safe to call twice and from `exit`. */
  dispose (): void {
    if (this.disposed) return
    this.disposed = true
    process.removeListener('exit', this.onExit)
    for (const h of this.hosts.values()) {
      try { ip('netns', 'del', h.ns) } catch { /* already gone */ }
    }
    try { ip('link', 'del', this.bridge) } catch { /* already gone */ }
  }
}
