/** `[name…] [--quick] [--key=value…]`; no names means every registered benchmark. */
export function parseBenchArgs(argv, all) {
    const names = [];
    const args = {};
    let quick = false;
    for (const a of argv) {
        if (a === '--quick')
            quick = true;
        else if (a.startsWith('--')) {
            const [k, ...v] = a.slice(2).split('=');
            args[k] = v.length > 0 ? v.join('=') : 'true';
        }
        else
            names.push(a);
    }
    return { names: names.length > 0 ? names : all, quick, args };
}
//# sourceMappingURL=args.js.map