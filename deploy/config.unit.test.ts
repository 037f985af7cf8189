import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'passk-config-'));

describe('loadConfig', () => {
  it('defaults to the embedded backend in ./.passk', () => {
    const cwd = dir();
    const c = loadConfig({}, {}, cwd);
    expect(c.backend).toBe('embedded');
    expect(c.dataDir).toBe(join(cwd, '.passk'));
    expect(c.clickhouse.url).toBeUndefined();
  });
  it('takes flags over env over the config file', () => {
    const cwd = dir();
    writeFileSync(join(cwd, 'passk.config.json'), JSON.stringify({ dataDir: 'from-file', maxEventBytes: 42 }));
    expect(loadConfig({}, {}, cwd).dataDir).toBe(join(cwd, 'from-file'));
    expect(loadConfig({}, { PASSK_DATA_DIR: 'from-env' }, cwd).dataDir).toBe(join(cwd, 'from-env'));
    expect(loadConfig({ dataDir: 'from-flag' }, { PASSK_DATA_DIR: 'from-env' }, cwd).dataDir).toBe(
      join(cwd, 'from-flag'),
    );
    expect(loadConfig({}, {}, cwd).maxEventBytes).toBe(42);
  });
  it('selects Kafka from env', () => {
    const c = loadConfig(
      {},
      { PASSK_BACKEND: 'kafka', KAFKA_BROKERS: 'a:1,b:2', SCHEMA_REGISTRY_URL: 'http://r:8080/apis/ccompat/v7' },
      dir(),
    );
    expect(c.backend).toBe('kafka');
    expect(c.kafka?.brokers).toEqual(['a:1', 'b:2']);
    expect(c.kafka?.partitions).toBe(4);
  });
  it('says what is missing for Kafka', () => {
    expect(() => loadConfig({ backend: 'kafka' }, {}, dir())).toThrow(/KAFKA_BROKERS and SCHEMA_REGISTRY_URL/);
  });
  it('takes the processors’ batching window from env over the config file, 500 ms by default', () => {
    const cwd = dir();
    expect(loadConfig({}, {}, cwd).batchWindowMs).toBe(500);
    writeFileSync(join(cwd, 'passk.config.json'), JSON.stringify({ batchWindowMs: 50 }));
    expect(loadConfig({}, {}, cwd).batchWindowMs).toBe(50);
    expect(loadConfig({}, { PASSK_BATCH_WINDOW_MS: '5' }, cwd).batchWindowMs).toBe(5);
    expect(() => loadConfig({}, { PASSK_BATCH_WINDOW_MS: '-1' }, cwd)).toThrow(/batchWindowMs/);
    expect(loadConfig({}, {}, cwd).gateSnapshotEvery).toBe(20_000);
    expect(loadConfig({}, { PASSK_GATE_SNAPSHOT_EVERY: '3' }, cwd).gateSnapshotEvery).toBe(3);
    expect(loadConfig({}, {}, cwd).gateHorizonDays).toBe(0);
    expect(loadConfig({}, { PASSK_GATE_HORIZON_DAYS: '90' }, cwd).gateHorizonDays).toBe(90);
    expect(() => loadConfig({}, { PASSK_GATE_HORIZON_DAYS: '-1' }, cwd)).toThrow(/gateHorizonDays/);
    expect(loadConfig({}, {}, cwd).gateEvictIdleDays).toBe(7);
    expect(loadConfig({}, { PASSK_GATE_EVICT_IDLE_DAYS: '0' }, cwd).gateEvictIdleDays).toBe(0);
    expect(() => loadConfig({}, { PASSK_GATE_EVICT_IDLE_DAYS: '-1' }, cwd)).toThrow(/gateEvictIdleDays/);
    expect(loadConfig({}, {}, cwd).gateIdHorizonDays).toBe(7);
    expect(loadConfig({}, { PASSK_GATE_ID_HORIZON_DAYS: '0' }, cwd).gateIdHorizonDays).toBe(0);
    expect(() => loadConfig({}, { PASSK_GATE_ID_HORIZON_DAYS: '-1' }, cwd)).toThrow(/gateIdHorizonDays/);
  });
  it('names the bad field', () => {
    expect(() => loadConfig({ backend: 'nope' }, {}, dir())).toThrow(ConfigError);
    expect(() => loadConfig({}, { CLICKHOUSE_URL: 'not a url' }, dir())).toThrow(/clickhouse\.url/);
  });
  it('takes the judge endpoint from flags over env over the config file, field by field', () => {
    const cwd = dir();
    expect(loadConfig({}, {}, cwd).judge).toEqual({});
    writeFileSync(
      join(cwd, 'passk.config.json'),
      JSON.stringify({
        judge: { url: 'http://file:8000/v1', model: 'file-model', apiKey: 'file-key', timeoutMs: 5000 },
      }),
    );
    expect(loadConfig({}, {}, cwd).judge).toEqual({
      url: 'http://file:8000/v1',
      model: 'file-model',
      apiKey: 'file-key',
      timeoutMs: 5000,
    });
    const env = {
      PASSK_JUDGE_URL: 'http://env:8000/v1',
      PASSK_JUDGE_API_KEY: 'env-key',
      PASSK_JUDGE_TIMEOUT_MS: '9000',
    };
    expect(loadConfig({}, env, cwd).judge).toEqual({
      url: 'http://env:8000/v1',
      model: 'file-model',
      apiKey: 'env-key',
      timeoutMs: 9000,
    });
    expect(loadConfig({ judgeModel: 'flag-model' }, env, cwd).judge).toEqual({
      url: 'http://env:8000/v1',
      model: 'flag-model',
      apiKey: 'env-key',
      timeoutMs: 9000,
    });
    expect(
      loadConfig({ judgeUrl: 'http://flag:1/v1', judgeModel: 'flag-model' }, { PASSK_JUDGE_MODEL: 'env-model' }, cwd)
        .judge,
    ).toMatchObject({ url: 'http://flag:1/v1', model: 'flag-model', apiKey: 'file-key' });
    expect(loadConfig({}, { PASSK_JUDGE_MODEL: 'env-model' }, cwd).judge.model).toBe('env-model');
  });
  it('names a bad judge field', () => {
    expect(() => loadConfig({ judgeUrl: 'not a url' }, {}, dir())).toThrow(/judge\.url/);
    expect(() => loadConfig({}, { PASSK_JUDGE_TIMEOUT_MS: '-1' }, dir())).toThrow(/judge\.timeoutMs/);
  });
  it('names a config file that is not JSON', () => {
    const cwd = dir();
    writeFileSync(join(cwd, 'passk.config.json'), '{ nope');
    expect(() => loadConfig({}, {}, cwd)).toThrow(/passk\.config\.json: not valid JSON/);
  });
  it('names the line of a JSON syntax error, as a configuration error (exit 2), not a crash', () => {
    const cwd = dir();
    writeFileSync(join(cwd, 'passk.config.json'), '{\n  "backend": "kafka",\n  "dataDir": oops\n}\n');
    expect(() => loadConfig({}, {}, cwd)).toThrow(ConfigError);
    expect(() => loadConfig({}, {}, cwd)).toThrow(/passk\.config\.json: not valid JSON at line 3, column 14/);
  });
  it('reads passk.config.yaml when there is no passk.config.json, with the same precedence', () => {
    const cwd = dir();
    writeFileSync(
      join(cwd, 'passk.config.yaml'),
      'dataDir: from-yaml\nmaxEventBytes: 4096\njudge:\n  url: http://127.0.0.1:1/v1\n  model: m\n',
    );
    const c = loadConfig({}, {}, cwd);
    expect([c.dataDir, c.maxEventBytes, c.judge?.model]).toEqual([join(cwd, 'from-yaml'), 4096, 'm']);
    expect(loadConfig({}, { PASSK_MAX_EVENT_BYTES: '7' }, cwd).maxEventBytes).toBe(7);
    writeFileSync(join(cwd, 'passk.config.json'), JSON.stringify({ dataDir: 'from-json' }));
    expect(loadConfig({}, {}, cwd).dataDir).toBe(join(cwd, 'from-json')); // JSON first, when both exist
    expect(loadConfig({ config: 'passk.config.yaml' }, {}, cwd).dataDir).toBe(join(cwd, 'from-yaml'));
  });
  it('names the file and line of a YAML error, and a named file that does not exist', () => {
    const cwd = dir();
    writeFileSync(join(cwd, 'team.yml'), 'backend: embedded\ndataDir: [unclosed\n');
    expect(() => loadConfig({ config: 'team.yml' }, {}, cwd)).toThrow(/team\.yml: not valid YAML at line \d/);
    writeFileSync(join(cwd, 'list.yaml'), '- a\n- b\n');
    expect(() => loadConfig({ config: 'list.yaml' }, {}, cwd)).toThrow(
      /list\.yaml: the configuration must be a mapping/,
    );
    expect(() => loadConfig({ config: 'missing.yaml' }, {}, cwd)).toThrow(ConfigError);
  });
});
