package passk.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The trial topology's keyed (n, c, attempts) aggregation in Kafka Streams, for bench/processors.ts: the same
 * events from the same topic (Confluent JSON wire format: a magic byte and a 4-byte schema id, then JSON), keyed as
 * passk keys them (suite, row), one state entry per key holding its rows per (dataset version, agent version) with
 * one slot per (run, attempt): an event id seen before is ignored, and of two events for one slot the smaller id
 * wins, as in passk's fold. exactly_once_v2, one stream thread, a RocksDB store with its changelog.
 *
 * Tuned as passk is run (docs/performance.md): the commit interval is passk's batch window (its durable unit:
 * `commitIntervalMs`), the record cache is on (10 MiB, the default; it coalesces a key's changes between commits as
 * passk's unit does), one stream thread over the topic's partitions (as many tasks as passk has partitions).
 *
 * Usage: TrialAggregation <bootstrap> <topic> <events> <application id> [commitIntervalMs=500] [cacheBytes=10485760].
 * Prints {"events":N,"ms":T,"foldedMs":F}: T from start() until the group's committed offsets (read stable, so
 * only committed transactions count) cover every input record, as passk's clock stops at its last commit; F when
 * the last expected event was folded (the clock of the first versions of this peer).
 */
public final class TrialAggregation {
  public static final class Attempt {
    public String e;
    public Boolean p;
    public String o;
  }

  public static final class Row {
    public int n;
    public int c;
    public int ungraded;
    public LinkedHashMap<String, Attempt> slots = new LinkedHashMap<>();
  }

  /** (dataset version, agent version) → row, for one (suite, row) key. */
  public static final class KeyState {
    public LinkedHashMap<String, Row> rows = new LinkedHashMap<>();
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  private static <T> Serde<T> jsonSerde(Class<T> type) {
    Serializer<T> ser = (topic, v) -> {
      try {
        return v == null ? null : JSON.writeValueAsBytes(v);
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    };
    Deserializer<T> de = (topic, b) -> {
      try {
        return b == null ? null : JSON.readValue(b, type);
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    };
    return Serdes.serdeFrom(ser, de);
  }

  private static void weigh(Row r, Boolean passed, int sign) {
    if (passed == null) r.ungraded += sign;
    else {
      r.n += sign;
      if (passed) r.c += sign;
    }
  }

  static KeyState fold(KeyState state, JsonNode t) {
    String eventId = t.get("event_id").asText();
    String rowKey = t.get("dataset_version").asText() + "\u001f" + t.get("agent").get("version").asText();
    Row row = state.rows.computeIfAbsent(rowKey, k -> new Row());
    for (Attempt a : row.slots.values()) if (a.e.equals(eventId)) return state;
    String slot = t.get("run_id").asText() + "\u001f" + t.get("attempt").asInt();
    Attempt held = row.slots.get(slot);
    if (held != null && held.e.compareTo(eventId) < 0) return state;
    Attempt a = new Attempt();
    a.e = eventId;
    JsonNode passed = t.get("passed");
    a.p = passed == null || passed.isNull() ? null : passed.asBoolean();
    JsonNode output = t.get("output");
    a.o = output == null || output.isNull() ? null : Integer.toHexString(output.asText().hashCode());
    if (held != null) weigh(row, held.p, -1);
    weigh(row, a.p, 1);
    row.slots.put(slot, a);
    return state;
  }

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String topic = args[1];
    long expected = Long.parseLong(args[2]);
    String appId = args[3];
    long commitIntervalMs = args.length > 4 ? Long.parseLong(args[4]) : 500;
    long cacheBytes = args.length > 5 ? Long.parseLong(args[5]) : 10L * 1024 * 1024;
    AtomicLong folded = new AtomicLong();
    CountDownLatch done = new CountDownLatch(1);

    StreamsBuilder builder = new StreamsBuilder();
    builder.stream(topic, Consumed.with(Serdes.String(), Serdes.ByteArray()))
        .mapValues(bytes -> {
          try {
            return JSON.readTree(Arrays.copyOfRange(bytes, 5, bytes.length));
          } catch (Exception e) {
            throw new RuntimeException(e);
          }
        })
        .filter((k, t) -> "TrialRecorded".equals(t.path("type").asText()))
        .groupByKey(Grouped.with(Serdes.String(), jsonSerde(JsonNode.class)))
        .aggregate(
            KeyState::new,
            (key, trial, state) -> {
              KeyState next = fold(state, trial);
              if (folded.incrementAndGet() >= expected) done.countDown();
              return next;
            },
            Materialized.<String, KeyState, KeyValueStore<Bytes, byte[]>>as("rows")
                .withKeySerde(Serdes.String())
                .withValueSerde(jsonSerde(KeyState.class)));

    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
    p.put(StreamsConfig.STATE_DIR_CONFIG, System.getProperty("java.io.tmpdir") + "/passk-peer-" + appId);
    p.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, commitIntervalMs);
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, cacheBytes);

    KafkaStreams streams = new KafkaStreams(builder.build(), p);
    long start = System.nanoTime();
    streams.start();
    boolean ok = done.await(600, TimeUnit.SECONDS);
    long foldedMs = (System.nanoTime() - start) / 1_000_000;
    long ms = foldedMs;
    if (ok) {
      // committed: the group's stable offsets cover the input's end offsets
      Properties ap = new Properties();
      ap.put("bootstrap.servers", bootstrap);
      try (Admin admin = Admin.create(ap)) {
        Map<TopicPartition, Long> ends = new LinkedHashMap<>();
        var parts = admin.describeTopics(java.util.List.of(topic)).allTopicNames().get().get(topic).partitions();
        Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest = new LinkedHashMap<>();
        for (var info : parts)
          latest.put(new TopicPartition(topic, info.partition()), org.apache.kafka.clients.admin.OffsetSpec.latest());
        admin.listOffsets(latest).all().get().forEach((tp, r) -> ends.put(tp, r.offset()));
        ListConsumerGroupOffsetsOptions stable = new ListConsumerGroupOffsetsOptions().requireStable(true);
        while (true) {
          Map<TopicPartition, OffsetAndMetadata> got =
              admin.listConsumerGroupOffsets(appId, stable).partitionsToOffsetAndMetadata().get();
          boolean all = true;
          for (var e : ends.entrySet()) {
            OffsetAndMetadata c = got.get(e.getKey());
            if (c == null || c.offset() < e.getValue()) all = false;
          }
          if (all) break;
          if ((System.nanoTime() - start) / 1_000_000_000L > 600) {
            ok = false;
            break;
          }
          Thread.sleep(10);
        }
      }
      ms = (System.nanoTime() - start) / 1_000_000;
    }
    streams.close(Duration.ofSeconds(30));
    streams.cleanUp();
    if (!ok) {
      System.err.println("peer: folded " + folded.get() + " of " + expected + " events in 600 s");
      System.exit(1);
    }
    System.out.println("{\"events\":" + folded.get() + ",\"ms\":" + ms + ",\"foldedMs\":" + foldedMs + "}");
  }
}
