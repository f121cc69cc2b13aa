import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, ConfigError, describeRedisTarget } from '../../config/mod.js';
function refusal(url) {
    try {
        loadConfig({ REDIS_URL: url });
    }
    catch (err) {
        assert.ok(err instanceof ConfigError, url);
        assert.deepEqual(err.variables, ['REDIS_URL'], url);
        return err.message;
    }
    assert.fail(`${url} was accepted`);
}
test('a single-node URL is kept as given', () => {
    for (const url of ['redis://127.0.0.1:6379', 'rediss://user:pw@redis.example:6380/2', 'redis://localhost']) {
        assert.deepEqual(loadConfig({ REDIS_URL: url }).redis.target, { kind: 'node', url });
    }
    assert.deepEqual(loadConfig({}).redis.target, { kind: 'node', url: 'redis://127.0.0.1:6379' });
});
test('a Sentinel URL names the sentinels, the master, the database and the credentials', () => {
    const c = loadConfig({ REDIS_URL: 'redis+sentinel://app:s%40cret@s1.example:26380,s2.example,[::1]:5000/mymaster/3?sentinel_password=sp' });
    assert.deepEqual(c.redis.target, {
        kind: 'sentinel',
        sentinels: [{ host: 's1.example', port: 26380 }, { host: 's2.example', port: 26379 }, { host: '::1', port: 5000 }],
        masterName: 'mymaster',
        db: 3,
        username: 'app',
        password: 's@cret',
        sentinelPassword: 'sp'
    });
    assert.ok(Object.isFrozen(c.redis.target));
    assert.equal(describeRedisTarget(c.redis.target), 'redis+sentinel://s1.example:26380,s2.example:26379,[::1]:5000/mymaster');
    assert.deepEqual(loadConfig({ REDIS_URL: 'redis+sentinel://:pw@h:1/m' }).redis.target, { kind: 'sentinel', sentinels: [{ host: 'h', port: 1 }], masterName: 'm', db: 0, password: 'pw' });
});
test('Redis Cluster is refused with a message that points to Sentinel', () => {
    for (const url of ['redis+cluster://a:7000,b:7001', 'redis-cluster://a:7000', 'redis://a:7000,b:7001', 'redis://u:p@a:7000,b:7001/0']) {
        const message = refusal(url);
        assert.match(message, /Redis Cluster is not supported/, url);
        assert.match(message, /redis\+sentinel:\/\//, url);
    }
});
test('a malformed Sentinel URL or an unknown scheme is a configuration error', () => {
    const cases = [
        ['redis+sentinel://s1:26379', /must name the master/],
        ['redis+sentinel:///mymaster', /at least one sentinel/],
        ['redis+sentinel://s1:26379,,s2/mymaster', /at least one sentinel/],
        ['redis+sentinel://s1:99999/mymaster', /not host\[:port\]/],
        ['redis+sentinel://s1:26379/mymaster/x', /database number/],
        ['redis+sentinel://s1:26379/mymaster?db=2', /unknown parameter "db"/],
        ['redis-sentinel://s1:26379/mymaster', /redis\+sentinel:\/\//],
        ['http://127.0.0.1:6379', /must start with redis:\/\//],
        ['127.0.0.1:6379', /must start with redis:\/\//],
        ['redis://a b', /spaces/]
    ];
    for (const [url, expected] of cases)
        assert.match(refusal(url), expected, url);
});
//# sourceMappingURL=config_redis_url.test.js.map