import { createSubmissionServer } from './server.js';
import { submissionTls } from './tls.js';
export { MAX_SUBMISSION_BYTES } from './server.js';
export { SubmissionTlsError } from './tls.js';
/** SMTP submission on OB_SMTP_SUBMISSION_HOST / _PORT (the caller checks `config.submission.enabled`). */
export async function startSubmission(deps) {
    const settings = deps.config.submission;
    const tls = await submissionTls({ certFile: settings.tlsCertFile, keyFile: settings.tlsKeyFile }, new URL(deps.config.http.publicUrl).hostname);
    const { server } = createSubmissionServer(deps, tls);
    await new Promise((resolve, reject) => {
        server.server.once('error', reject);
        server.listen(settings.port, settings.host, () => { server.server.off('error', reject); resolve(); });
    });
    const address = server.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : settings.port;
    deps.log.info({ host: settings.host, port, selfSignedCertificate: tls.selfSigned, insecureAuth: settings.insecureAuth }, 'SMTP submission listening');
    let closing;
    return {
        server,
        port,
        // Once: a second call (the gateway's drain after an earlier close) waits for the first.
        close: async (timeoutMs) => await (closing ??= new Promise((resolve) => {
            server.options.closeTimeout = timeoutMs;
            server.close(() => resolve());
        }))
    };
}
//# sourceMappingURL=mod.js.map