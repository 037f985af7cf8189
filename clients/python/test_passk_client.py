"""Run by test/clients/python.int.test.ts against a real `passk ingest` (PASSK_URL, PASSK_INGEST_TOKEN).

Records 1,000 trials and 200 traces, re-sends them (nothing counted twice), and sends a batch with 3 bad items;
then a buffer of 10,001 trials (over the server's 10,000-item cap: sent again in halves) and one item too large
for any request (reported once, dropped: a second flush sends nothing).
Prints one JSON line with what it saw; the TypeScript test checks the store side.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from passk_client import PasskClient  # noqa: E402


def trial(i):
    return {"suite": "py", "dataset_version": "v1", "row_id": f"r{i % 100}", "agent_version": "py-agent",
            "run_id": "py-run-1", "attempt": i // 100, "passed": i % 4 != 0}


def trace(i):
    return {"trace_id": f"py-t{i}", "agent_version": "py-agent", "segment": "support", "input_fingerprint": f"fp{i}",
            "sampling": {"policy": "uniform", "probability": 0.25}, "occurred_at": 1_700_000_000_000 + i}


client = PasskClient(os.environ["PASSK_URL"], token=os.environ["PASSK_INGEST_TOKEN"], batch_size=250)
for i in range(1000):
    client.record_trial(trial(i))
for i in range(200):
    client.record_trace(trace(i))
first = client.flush()

for i in range(1000):
    client.record_trial(trial(i))
for i in range(200):
    client.record_trace(trace(i))
again = client.flush()

bad_batch = [dict(trial(i), run_id="py-run-2") for i in range(50)]
bad_batch[3]["passed"] = "maybe"
bad_batch[17]["row_id"] = None
del bad_batch[31]["agent_version"]
answer = client.send("trials", bad_batch)

big = PasskClient(os.environ["PASSK_URL"], token=os.environ["PASSK_INGEST_TOKEN"], batch_size=20_000)
for i in range(10_001):
    big.record_trial(dict(trial(i), run_id="py-run-3", row_id=f"big{i}", attempt=0))
big.record_trial(dict(trial(0), run_id="py-run-4", output="x" * (17 << 20)))
split = big.flush()
split["rejected"] = [{k: v for k, v in r.items() if k != "item"} for r in split["rejected"]]
after = big.flush()

print(json.dumps({"first": first, "again": again, "bad": answer, "split": split, "after": after}))
