import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { ServerProcess } from './servers.js';
import { freePort } from './ports.js';
/**
 * A NATS cluster of the test's own on loopback: `size` nats-server processes with JetStream, each with its own
 * client port, route port and data directory, routed to each other. Nodes can be killed and restarted one by
 * one (`nodes[i].stop()` / `.start()`); the machine's own NATS is never touched.
 */
export class NatsCluster {
    nodes;
    constructor(nodes) {
        this.nodes = nodes;
    }
    static async start(size = 3, name = `obtest${process.pid}`) {
        const clientPorts = [];
        const routePorts = [];
        for (let i = 0; i < size; i++) {
            clientPorts.push(await freePort());
            routePorts.push(await freePort());
        }
        const routes = routePorts.map((p) => `nats://127.0.0.1:${p}`).join(',');
        const nodes = await Promise.all(clientPorts.map(async (port, i) => await ServerProcess.nats({
            port,
            args: ['--server_name', `n${i + 1}`, '--cluster_name', name, '--cluster', `nats://127.0.0.1:${routePorts[i]}`, '--routes', routes]
        })));
        const cluster = new NatsCluster(nodes);
        await cluster.jetStreamReady();
        return cluster;
    }
    /** Every node's client URL, comma-separated, as NATS_URL takes them. */
    get url() {
        return this.nodes.map((n) => n.url).join(',');
    }
    /**
     * Resolves once the JetStream meta group has a leader and every node is routed, so streams and buckets with
     * three replicas can be created: the account info request only answers through an elected meta leader.
     */
    async jetStreamReady(timeoutMs = 20_000) {
        const deadline = Date.now() + timeoutMs;
        const nc = await connect({ servers: this.url.split(','), timeout: 2000 });
        try {
            for (;;) {
                try {
                    const jsm = await jetstreamManager(nc, { timeout: 1000 });
                    await jsm.getAccountInfo();
                    const probe = `ob_probe_${Date.now()}`;
                    await jsm.streams.add({ name: probe, subjects: [`${probe}.>`], num_replicas: this.nodes.length });
                    await jsm.streams.delete(probe);
                    return;
                }
                catch (err) {
                    if (Date.now() > deadline)
                        throw new Error(`JetStream cluster not ready: ${err.message}`);
                    await new Promise((resolve) => setTimeout(resolve, 250));
                }
            }
        }
        finally {
            await nc.close();
        }
    }
    async dispose() {
        await Promise.all(this.nodes.map(async (n) => await n.dispose()));
    }
}
//# sourceMappingURL=nats_cluster.js.map