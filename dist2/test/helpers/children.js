import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
export const ENGINE_CHILD = fileURLToPath(new URL('./engine_child.js', import.meta.url));
export const GATEWAY_CHILD = fileURLToPath(new URL('./gateway_child.js', import.meta.url));
/** Spawns a role child with exactly `env` (plus PATH) and resolves once it printed `ready`. */
export async function spawnChild(script, env) {
    const log = process.env.OB_TEST_LOG;
    const c = spawn(process.execPath, [script], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...(log !== undefined ? { OB_TEST_LOG: log } : {}), ...env },
        stdio: ['ignore', 'pipe', 'inherit']
    });
    if (log !== undefined)
        c.stdout.on('data', (b) => process.stderr.write(b)); // the child logs to stdout
    return await new Promise((resolve, reject) => {
        let out = '';
        c.stdout.on('data', (b) => {
            out += b.toString();
            const m = /ready(?: (\d+))?\n/.exec(out);
            if (m !== null)
                resolve({ process: c, ...(m[1] !== undefined ? { port: Number(m[1]) } : {}) });
        });
        c.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    });
}
/** SIGKILL (a crash) or SIGTERM (a drain), resolving once the child is gone. */
export async function stopChild(c, signal = 'SIGTERM') {
    if (c.process.exitCode !== null || c.process.signalCode !== null)
        return;
    await new Promise((resolve) => { c.process.once('exit', () => resolve()); c.process.kill(signal); });
}
//# sourceMappingURL=children.js.map