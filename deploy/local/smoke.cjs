#!/usr/bin/env node
// Smoke test of the local stack (deploy/local/up.sh) with the project's own client libraries:
// kafkajs 2.2.4 against Kafka 4.x, @kafkajs/confluent-schema-registry 3.9.0 against Apicurio
// Registry's Confluent-compatible API.
//   node deploy/local/smoke.cjs
// Env: KAFKA_BROKERS, SCHEMA_REGISTRY_URL; if unset, read from $PASSK_STACK_DIR/stack.env (written
// by up.sh), else 127.0.0.1:9092 and http://127.0.0.1:8080/apis/ccompat/v7.
// Modules are resolved from the repo's node_modules first, then from NODE_PATH / normal lookup.
// Every check asserts; the last line is "smoke: OK" (exit 0) or "smoke: FAILED ..." (exit 1).
'use strict';
const path = require('path');
const { createRequire } = require('module');

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

function load(name) {
  const repoRoot = path.resolve(__dirname, '..', '..');
  try {
    return createRequire(path.join(repoRoot, 'package.json'))(name);
  } catch (e) {
    if (e.code !== 'MODULE_NOT_FOUND') throw e;
  }
  return require(name);
}
const { Kafka, logLevel, CompressionTypes } = load('kafkajs');
const { SchemaRegistry, SchemaType } = load('@kafkajs/confluent-schema-registry');

// Not in the environment? Take them from the stack.env that up.sh writes, then the defaults.
function stackEnv() {
  const file = path.join(
    process.env.PASSK_STACK_DIR || path.resolve(__dirname, '..', '..', '.local-stack'),
    'stack.env',
  );
  try {
    return Object.fromEntries(
      require('fs')
        .readFileSync(file, 'utf8')
        .split('\n')
        .map((l) => l.match(/^([A-Z_]+)=(.*)$/))
        .filter(Boolean)
        .map((m) => [m[1], m[2]]),
    );
  } catch (_) {
    return {};
  }
}
const fileEnv = stackEnv();
const BROKERS = (process.env.KAFKA_BROKERS || fileEnv.KAFKA_BROKERS || '127.0.0.1:9092').split(',');
const REGISTRY =
  process.env.SCHEMA_REGISTRY_URL || fileEnv.SCHEMA_REGISTRY_URL || 'http://127.0.0.1:8080/apis/ccompat/v7';

const t0 = Date.now();
let expectedNoise = 0;
function ok(what, extra) {
  console.log(`ok ${String(Date.now() - t0).padStart(6)} ms  ${what}${extra ? `  ${extra}` : ''}`);
}
function assert(cond, msg) {
  if (!cond) throw new Error(`assertion failed: ${msg}`);
}
async function expectReject(p, check, what) {
  try {
    await p;
  } catch (e) {
    check(e);
    return e;
  }
  throw new Error(`expected a rejection: ${what}`);
}
async function http(method, url, body) {
  const res = await fetch(url, {
    method,
    headers: { 'Content-Type': 'application/vnd.schemaregistry.v1+json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data;
  try {
    data = JSON.parse(text);
  } catch (_) {
    data = text;
  }
  return { status: res.status, data };
}
const jsonSchema = (s) => ({ type: SchemaType.JSON, schema: JSON.stringify(s) });

async function main() {
  const run = `smoke-${Date.now()}`;
  // kafkajs logs retriable and deliberately provoked broker errors at ERROR level; drop the
  // expected ones (counted in the summary) so that anything printed is worth reading.
  const EXPECTED =
    /Topic creation errors|larger than the max message size|concurrent operation on the same transaction|coordinator is (loading|not available)/i;
  const logCreator =
    () =>
    ({ level, log }) => {
      const text = `${log.message} ${log.error || ''}`;
      if (EXPECTED.test(text)) {
        expectedNoise++;
        return;
      }
      console.error(JSON.stringify({ level, ...log }));
    };
  const kafka = new Kafka({ clientId: 'passk-smoke', brokers: BROKERS, logLevel: logLevel.WARN, logCreator });
  const registry = new SchemaRegistry({ host: REGISTRY });
  const admin = kafka.admin();
  await admin.connect();

  // ---- cluster + topics: create / describe / delete, compacted config ----------------------
  const cluster = await admin.describeCluster();
  assert(cluster.brokers.length === 1, 'one broker');
  ok('describeCluster', JSON.stringify(cluster.brokers));

  const topic = `${run}-events`;
  const compacted = `${run}-compacted`;
  const created = await admin.createTopics({
    waitForLeaders: true,
    topics: [
      { topic, numPartitions: 2, replicationFactor: 1 },
      {
        topic: compacted,
        numPartitions: 1,
        replicationFactor: 1,
        configEntries: [
          { name: 'cleanup.policy', value: 'compact' },
          { name: 'min.compaction.lag.ms', value: '0' },
        ],
      },
    ],
  });
  assert(created === true, 'createTopics returned true');
  const again = await admin.createTopics({ topics: [{ topic }] });
  assert(again === false, 'createTopics of an existing topic returns false');
  ok('createTopics (plain 2 partitions + cleanup.policy=compact)');

  const md = await admin.fetchTopicMetadata({ topics: [topic, compacted] });
  assert(md.topics.find((t) => t.name === topic).partitions.length === 2, '2 partitions');
  const cfg = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [
      { type: 2 /* TOPIC */, name: compacted, configNames: ['cleanup.policy', 'max.message.bytes'] },
      { type: 2, name: topic, configNames: ['cleanup.policy'] },
    ],
  });
  const cfgOf = (name, key) =>
    cfg.resources.find((r) => r.resourceName === name).configEntries.find((e) => e.configName === key).configValue;
  assert(cfgOf(compacted, 'cleanup.policy') === 'compact', 'compacted topic has cleanup.policy=compact');
  assert(cfgOf(topic, 'cleanup.policy') === 'delete', 'plain topic has cleanup.policy=delete');
  ok(
    'fetchTopicMetadata + describeConfigs',
    `cleanup.policy=${cfgOf(compacted, 'cleanup.policy')} max.message.bytes=${cfgOf(compacted, 'max.message.bytes')}`,
  );

  // ---- registry: JSON Schema subject, BACKWARD compatibility ------------------------------
  // Apicurio's JSON Schema BACKWARD check = "can the new schema read every document the old one
  // accepted?". With an OPEN content model (no additionalProperties:false) even a new OPTIONAL
  // property is refused (old data may hold that key with any type: "property schemas narrowed").
  // So v1 must be CLOSED for "add an optional property" to be a compatible change.
  const subject = `${topic}-value`;
  const v1 = {
    type: 'object',
    properties: { runId: { type: 'string' }, n: { type: 'integer' } },
    required: ['runId', 'n'],
    additionalProperties: false,
  };
  const r1 = await registry.register(jsonSchema(v1), { subject });
  const r1again = await registry.register(jsonSchema(v1), { subject });
  assert(r1again.id === r1.id, `re-registering v1 keeps its id (${r1.id} vs ${r1again.id})`);
  const cfgSubj = await http('GET', `${REGISTRY}/config/${encodeURIComponent(subject)}`);
  assert(
    cfgSubj.status === 200 && cfgSubj.data.compatibilityLevel === 'BACKWARD',
    `GET /config/{subject} = BACKWARD (${JSON.stringify(cfgSubj)})`,
  );
  ok('register JSON v1 (+ idempotent re-register, subject compatibility BACKWARD)', `id=${r1.id}`);

  const v2 = { ...v1, properties: { ...v1.properties, label: { type: 'string' } } }; // new OPTIONAL property
  const r2 = await registry.register(jsonSchema(v2), { subject });
  assert(r2.id !== r1.id, 'v2 has a new id');
  const versions = await http('GET', `${REGISTRY}/subjects/${encodeURIComponent(subject)}/versions`);
  assert(JSON.stringify(versions.data) === '[1,2]', `versions [1,2] (${JSON.stringify(versions.data)})`);
  assert((await registry.getLatestSchemaId(subject)) === r2.id, 'latest id = v2');
  ok('register JSON v2 = v1 + optional property (backward compatible)', `id=${r2.id}`);

  const is409 = (e) => assert(e.status === 409, `HTTP 409, got ${e.status} ${e.message}`);
  const v3required = {
    ...v2,
    properties: { ...v2.properties, owner: { type: 'string' } },
    required: [...v2.required, 'owner'],
  };
  const e1 = await expectReject(registry.register(jsonSchema(v3required), { subject }), is409, 'new required property');
  ok('refused: new REQUIRED property', `409 ${e1.message}`);
  const v3type = { ...v2, properties: { ...v2.properties, n: { type: 'string' } } };
  const e2 = await expectReject(registry.register(jsonSchema(v3type), { subject }), is409, 'type change');
  ok('refused: property type change integer->string', `409 ${e2.message}`);
  // NB: re-registering content that is already a version of the subject (e.g. v1 again) is NOT
  // checked: it answers with the existing id and adds no version. So give the removal a title.
  const v3removed = { ...v2, title: 'v3', properties: { runId: v2.properties.runId, n: v2.properties.n } };
  const e3 = await expectReject(
    registry.register(jsonSchema(v3removed), { subject }),
    is409,
    'property removed from closed model',
  );
  ok('refused: property removed (additionalProperties:false)', `409 ${e3.message}`);
  const back = await registry.register(jsonSchema(v1), { subject });
  assert(back.id === r1.id, 'v1 content again -> v1 id');
  const versions2 = await http('GET', `${REGISTRY}/subjects/${encodeURIComponent(subject)}/versions`);
  assert(JSON.stringify(versions2.data) === '[1,2]', `still versions [1,2] (${JSON.stringify(versions2.data)})`);
  ok('re-register old v1 content -> old id, no new version, no compatibility check');

  const openSubject = `${topic}-open-value`;
  const open1 = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
  await registry.register(jsonSchema(open1), { subject: openSubject });
  const open2 = { ...open1, properties: { ...open1.properties, label: { type: 'string' } } };
  const e4 = await expectReject(
    registry.register(jsonSchema(open2), { subject: openSubject }),
    is409,
    'optional property on open model',
  );
  ok('refused: optional property added to an OPEN content model', `409 ${e4.message}`);
  const verbose = await http(
    'POST',
    `${REGISTRY}/compatibility/subjects/${encodeURIComponent(openSubject)}/versions/latest`,
    { schemaType: 'JSON', schema: JSON.stringify(open2) },
  );
  assert(
    verbose.status === 200 && verbose.data.is_compatible === false,
    `compatibility check says false (${JSON.stringify(verbose)})`,
  );
  ok('POST /compatibility/... answers is_compatible=false (no 409 there)');

  // Avro too (default subject = namespace.name)
  const avro = {
    type: 'record',
    name: 'Smoke',
    namespace: `passk.${run.replace(/-/g, '_')}`,
    fields: [{ name: 'n', type: 'int' }],
  };
  const { id: avroId } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(avro) });
  ok('register Avro', `id=${avroId}`);

  // ---- idempotent producer ------------------------------------------------------------------
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const sent = await producer.send({
    topic,
    acks: -1,
    compression: CompressionTypes.None,
    messages: [
      { key: 'k1', value: await registry.encode(r1.id, { runId: run, n: 1 }), partition: 0 },
      { key: 'k2', value: await registry.encode(r2.id, { runId: run, n: 2, label: 'two' }), partition: 0 },
      { key: 'k3', value: await registry.encode(avroId, { n: 3 }), partition: 0 },
    ],
  });
  assert(sent[0].errorCode === 0, 'produce ok');
  await expectReject(
    registry.encode(r2.id, { runId: run, n: 'x' }),
    (e) => assert(/invalid payload/i.test(e.message), e.message),
    'JSON validation on encode',
  );
  ok('idempotent produce (3 records, JSON v1/v2 + Avro)', JSON.stringify(sent));

  // compacted topic: same key twice
  await producer.send({
    topic: compacted,
    messages: [
      { key: 'a', value: '1' },
      { key: 'a', value: '2' },
      { key: 'b', value: '1' },
    ],
  });
  ok('produce to compacted topic');

  // message.max.bytes default (1048588): a 2 MiB record is refused
  const big = Buffer.alloc(2 * 1024 * 1024, 1);
  const eBig = await expectReject(
    producer.send({ topic, messages: [{ key: 'big', value: big, partition: 1 }] }),
    (e) =>
      assert(
        /too large|MESSAGE_TOO_LARGE|larger than/i.test(`${e.message} ${e.type}`),
        `${e.name} ${e.type} ${e.message}`,
      ),
    '2 MiB record',
  );
  ok('2 MiB record refused by the broker', `${eBig.name}: ${eBig.type || ''} ${eBig.message}`);

  // ---- transactional producer: commit + abort -------------------------------------------------
  const tx = kafka.producer({ transactionalId: `${run}-tx`, idempotent: true, maxInFlightRequests: 1 });
  await tx.connect();
  const t1 = await tx.transaction();
  await t1.send({
    topic,
    messages: [{ key: 'tx1', value: await registry.encode(r2.id, { runId: run, n: 4 }), partition: 0 }],
  });
  await t1.commit();
  const t2 = await tx.transaction();
  await t2.send({
    topic,
    messages: [{ key: 'aborted', value: await registry.encode(r2.id, { runId: run, n: 999 }), partition: 0 }],
  });
  await t2.abort();
  const t3 = await tx.transaction();
  await t3.send({
    topic,
    messages: [{ key: 'tx2', value: await registry.encode(r1.id, { runId: run, n: 5 }), partition: 0 }],
  });
  await t3.commit();
  ok('transactional produce (commit, abort, commit)');

  // ---- consumer group: consume (read_committed) + explicit commit + fetchOffsets ------------
  const groupId = `${run}-group`;
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 1000 });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  const got = [];
  let lastOffset = null;
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timeout consuming, got ${JSON.stringify(got)}`)), 60000);
    consumer
      .run({
        autoCommit: false,
        eachMessage: async ({ topic: tp, partition, message }) => {
          got.push({ key: message.key.toString(), value: await registry.decode(message.value) });
          lastOffset = Number(message.offset);
          await consumer.commitOffsets([{ topic: tp, partition, offset: String(lastOffset + 1) }]);
          if (got.length === 5) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  assert(
    JSON.stringify(got.map((g) => g.key)) === JSON.stringify(['k1', 'k2', 'k3', 'tx1', 'tx2']),
    `keys in order, aborted one skipped: ${JSON.stringify(got.map((g) => g.key))}`,
  );
  assert(got[1].value.label === 'two' && got[2].value.n === 3, 'decoded JSON v2 and Avro');
  ok('consumer group consumed 5 records (aborted txn skipped), decoded', JSON.stringify(got.map((g) => g.value)));

  const offsets = await admin.fetchOffsets({ groupId, topics: [topic] });
  const p0 = offsets[0].partitions.find((p) => p.partition === 0);
  assert(Number(p0.offset) === lastOffset + 1, `committed offset ${p0.offset} = ${lastOffset + 1}`);
  ok('fetchOffsets', JSON.stringify(offsets));
  const groups = await admin.listGroups();
  assert(
    groups.groups.some((g) => g.groupId === groupId),
    'listGroups has the group',
  );
  const dg = await admin.describeGroups([groupId]);
  ok('listGroups + describeGroups', `state=${dg.groups[0].state}`);

  // consume-transform-produce: offsets committed inside a transaction (AddOffsetsToTxn/TxnOffsetCommit)
  const txGroup = `${run}-txgroup`;
  const t4 = await tx.transaction();
  await t4.send({ topic: compacted, messages: [{ key: 'c', value: 'from-tx' }] });
  await t4.sendOffsets({ consumerGroupId: txGroup, topics: [{ topic, partitions: [{ partition: 0, offset: '2' }] }] });
  await t4.commit();
  // EndTxn returns before the coordinator has written the commit markers; kafkajs's OffsetFetch v4
  // has no require_stable flag, so the offset can read -1 for a few ms after commit(): poll.
  let txOffsets;
  const pollStart = Date.now();
  for (;;) {
    txOffsets = await admin.fetchOffsets({ groupId: txGroup, topics: [topic] });
    if (txOffsets[0].partitions.find((p) => p.partition === 0).offset === '2') break;
    assert(Date.now() - pollStart < 10000, `txn offset commit visible within 10 s ${JSON.stringify(txOffsets)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  ok('transaction.sendOffsets + fetchOffsets', `visible ${Date.now() - pollStart} ms after commit()`);

  await admin.deleteGroups([groupId, txGroup]);
  await admin.deleteTopics({ topics: [topic, compacted] });
  const left = await admin.listTopics();
  assert(!left.includes(topic) && !left.includes(compacted), 'topics deleted');
  ok('deleteGroups + deleteTopics');

  await Promise.all([producer.disconnect(), tx.disconnect()]);
  await admin.disconnect();
}

main().then(
  () => {
    console.log(`smoke: OK (${Date.now() - t0} ms; ${expectedNoise} expected kafkajs error logs suppressed)`);
    process.exit(0);
  },
  (e) => {
    console.error('smoke: FAILED', e);
    process.exit(1);
  },
);
