import { createServer } from 'node:http';
import { metricsAuthorized } from './metrics_token.js';
/**
 * `GET /metrics` on its own port, for a process without the HTTP API (OB_ROLE engine or inbound). Anything
 * else is 404; the server answers only what Prometheus asks for and holds no request body. With `token`
 * (OB_METRICS_TOKEN) a request without `Authorization: Bearer <token>` is 401.
 */
export async function startMetricsServer(metrics, host, port, token) {
    const server = createServer((req, res) => {
        const path = (req.url ?? '').split('?')[0];
        if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
            res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
            return;
        }
        if (!metricsAuthorized(req.headers.authorization, token)) {
            res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('unauthorized\n');
            return;
        }
        metrics.render().then((text) => {
            res.writeHead(200, { 'content-type': metrics.contentType }).end(req.method === 'HEAD' ? undefined : text);
        }, () => {
            res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
        });
    });
    // a scraper keeps its connection open between scrapes; a closing process must not wait for it
    server.keepAliveTimeout = 65_000;
    await new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => { server.off('error', reject); resolve(); });
    }).catch((err) => {
        throw new Error(`cannot listen for metrics on ${host}:${port} (${err.message}); set OB_METRICS_PORT`);
    });
    return {
        port: server.address().port,
        async close() {
            server.closeAllConnections();
            await new Promise((resolve) => server.close(() => resolve()));
        }
    };
}
//# sourceMappingURL=metrics_server.js.map