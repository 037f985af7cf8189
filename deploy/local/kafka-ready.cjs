#!/usr/bin/env node
// Client-level readiness probe for the local Kafka broker, used by up.sh.
//   node deploy/local/kafka-ready.cjs [host:port]      (default $KAFKA_BROKERS or 127.0.0.1:9092)
// Exit 0 when ready, 1 otherwise (one attempt, bounded in time; up.sh loops).
//
// With kafkajs resolvable (the repo's node_modules, or NODE_PATH): describeCluster() must list
// the broker at the expected address AND the group coordinator must answer (describeGroups),
// and a transactional producer must get a producer id; this also makes the broker create
// __consumer_offsets and __transaction_state, so the first test of a run does not pay for them.
// Without kafkajs (fresh machine before `npm ci`): a dependency-free probe on the wire protocol,
// ApiVersions v0 (error_code 0) + Metadata v0 (broker list contains host:port).
'use strict';
const path = require('path');
const net = require('net');
const { createRequire } = require('module');

const target = process.argv[2] || (process.env.KAFKA_BROKERS || '127.0.0.1:9092').split(',')[0];
const [host, portStr] = target.split(':');
const port = Number(portStr);
const DEADLINE_MS = Number(process.env.KAFKA_READY_PROBE_MS || 15000);

function tryRequire(name) {
  const repoRoot = path.resolve(__dirname, '..', '..');
  try {
    return createRequire(path.join(repoRoot, 'package.json'))(name);
  } catch (_) {}
  try {
    return require(name);
  } catch (_) {}
  return null;
}

async function withKafkajs(kafkajs) {
  const { Kafka, logLevel } = kafkajs;
  const kafka = new Kafka({
    clientId: 'passk-ready-probe',
    brokers: [target],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2000,
    requestTimeout: 5000,
    retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 1000 },
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { brokers, controller } = await admin.describeCluster();
    if (!brokers.some((b) => b.host === host && b.port === port)) {
      throw new Error(`broker ${target} not in cluster metadata: ${JSON.stringify(brokers)}`);
    }
    await admin.describeGroups(['passk-ready-probe']); // FindCoordinator: group coordinator up
    // FindCoordinator(TRANSACTION) + InitProducerId: creates/loads __transaction_state, so the first
    // idempotent or transactional producer of a test run does not hit COORDINATOR_NOT_AVAILABLE/LOADING.
    const producer = kafka.producer({ transactionalId: 'passk-ready-probe', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.disconnect();
    return `kafkajs: brokers=${JSON.stringify(brokers)} controller=${controller}`;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

function rawRequest(apiKey, apiVersion, body) {
  const clientId = Buffer.from('passk-ready-probe');
  const header = Buffer.alloc(2 + 2 + 4 + 2);
  header.writeInt16BE(apiKey, 0);
  header.writeInt16BE(apiVersion, 2);
  header.writeInt32BE(7, 4);
  header.writeInt16BE(clientId.length, 8);
  const payload = Buffer.concat([header, clientId, body]);
  const size = Buffer.alloc(4);
  size.writeInt32BE(payload.length, 0);
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host, port });
    let buf = Buffer.alloc(0);
    sock.setTimeout(3000, () => {
      sock.destroy();
      reject(new Error('timeout'));
    });
    sock.on('error', reject);
    sock.on('connect', () => sock.write(Buffer.concat([size, payload])));
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
        sock.end();
        resolve(buf.subarray(4, 4 + buf.readInt32BE(0)));
      }
    });
  });
}

async function raw() {
  const av = await rawRequest(18, 0, Buffer.alloc(0)); // ApiVersions v0
  const err = av.readInt16BE(4);
  if (err !== 0) throw new Error(`ApiVersions error_code ${err}`);
  const md = await rawRequest(3, 0, Buffer.from([0, 0, 0, 0])); // Metadata v0, topics=[]
  let o = 4;
  const n = md.readInt32BE(o);
  o += 4;
  const brokers = [];
  for (let i = 0; i < n; i++) {
    const nodeId = md.readInt32BE(o);
    o += 4;
    const len = md.readInt16BE(o);
    o += 2;
    const h = md.toString('utf8', o, o + len);
    o += len;
    const p = md.readInt32BE(o);
    o += 4;
    brokers.push({ nodeId, host: h, port: p });
  }
  if (!brokers.some((b) => b.host === host && b.port === port)) {
    throw new Error(`broker ${target} not in metadata: ${JSON.stringify(brokers)}`);
  }
  return `raw protocol: brokers=${JSON.stringify(brokers)}`;
}

const kafkajs = process.env.KAFKA_READY_RAW === '1' ? null : tryRequire('kafkajs'); // KAFKA_READY_RAW=1: test the fallback
const timer = setTimeout(() => {
  console.error(`kafka-ready: no answer within ${DEADLINE_MS} ms`);
  process.exit(1);
}, DEADLINE_MS);
(kafkajs ? withKafkajs(kafkajs) : raw())
  .then((msg) => {
    clearTimeout(timer);
    console.log(`kafka-ready: OK (${msg})`);
    process.exit(0);
  })
  .catch((e) => {
    clearTimeout(timer);
    console.error(`kafka-ready: not ready: ${e.message}`);
    process.exit(1);
  });
