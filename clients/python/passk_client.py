"""passk_client: record trials, traces, judgments and labels into passk over its HTTP ingest API.

Standard library only (urllib, gzip, json). Items are buffered and sent in batches as NDJSON (gzipped);
a 429 or 5xx answer is retried after the server's Retry-After (or a growing delay). Every answer says per item
whether it was accepted, a duplicate (already recorded; counted once) or rejected (with its index, field and reason).
A batch refused as too large (413: over the body limit or the item cap) is sent again in halves; an item refused
alone, or a batch refused for good (400, 401, 415, …), is dropped from the buffer and reported with its reason, so
flush() never sends it again.

    from passk_client import PasskClient
    client = PasskClient("http://127.0.0.1:7358", token=os.environ["PASSK_INGEST_TOKEN"])
    client.record_trial({"suite": "refunds", "dataset_version": "v1", "row_id": "r17", "agent_version": "prompt-v2",
                         "run_id": "run-3", "attempt": 0, "passed": True})
    result = client.flush()   # {"accepted": 1, "duplicates": 0, "rejected": []}
"""

import gzip
import json
import time
import urllib.error
import urllib.request

KINDS = ("trials", "traces", "judgments", "labels")


class PasskError(Exception):
    """A request passk refused as a whole (401, 413, 415, …) or that failed after every retry."""

    def __init__(self, status, message):
        super().__init__(f"passk ingest: HTTP {status}: {message}")
        self.status = status


class PasskClient:
    def __init__(self, base_url, token, batch_size=500, max_retries=8, timeout=30.0, gzip_bodies=True):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.timeout = timeout
        self.gzip_bodies = gzip_bodies
        self._buffers = {kind: [] for kind in KINDS}
        self._totals = {"accepted": 0, "duplicates": 0, "rejected": []}

    # Recording: buffered, sent when a batch fills or on flush().
    def record_trial(self, trial):
        self._add("trials", trial)

    def record_trace(self, trace):
        self._add("traces", trace)

    def record_judgment(self, judgment):
        self._add("judgments", judgment)

    def record_label(self, label):
        self._add("labels", label)

    def _add(self, kind, item):
        buf = self._buffers[kind]
        buf.append(item)
        if len(buf) >= self.batch_size:
            self._send_buffer(kind)

    def flush(self):
        """Sends everything buffered; returns the totals since the last flush (rejected items with their reasons)."""
        for kind in KINDS:
            while self._buffers[kind]:
                self._send_buffer(kind)
        totals, self._totals = self._totals, {"accepted": 0, "duplicates": 0, "rejected": []}
        return totals

    def _send_buffer(self, kind):
        batch = self._buffers[kind][: self.batch_size]
        self._deliver(kind, batch)
        del self._buffers[kind][: len(batch)]

    def _deliver(self, kind, batch):
        """Sends a batch; refused for good, it is reported and dropped (a retriable failure raises, kept buffered)."""
        try:
            answer = self.send(kind, batch)
        except PasskError as e:
            if e.status == 413 and len(batch) > 1:
                half = len(batch) // 2
                self._deliver(kind, batch[:half])
                self._deliver(kind, batch[half:])
                return
            if e.status == 0 or e.status == 429 or e.status >= 500:
                raise
            for i, item in enumerate(batch):
                self._totals["rejected"].append({"index": i, "status": "rejected", "field": "(request)",
                                                 "reason": str(e), "kind": kind, "item": item})
            return
        self._totals["accepted"] += answer["accepted"]
        self._totals["duplicates"] += answer["duplicates"]
        for r in answer["items"]:
            if r["status"] == "rejected":
                self._totals["rejected"].append({**r, "kind": kind, "item": batch[r["index"]]})

    def send(self, kind, items):
        """Sends one batch now; returns the server's answer ({accepted, duplicates, rejected, items})."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        body = ("\n".join(json.dumps(i, separators=(",", ":")) for i in items) + "\n").encode("utf-8")
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/x-ndjson"}
        if self.gzip_bodies:
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        delay = 0.2
        for attempt in range(self.max_retries + 1):
            req = urllib.request.Request(f"{self.base_url}/api/v1/{kind}", data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as res:
                    return json.loads(res.read())
            except urllib.error.HTTPError as e:
                payload = e.read()
                if e.code == 400 or e.code == 207:
                    try:
                        answer = json.loads(payload)
                    except ValueError:
                        answer = None
                    if isinstance(answer, dict) and "items" in answer:
                        return answer  # every item rejected: the reasons are in the answer
                retriable = e.code == 429 or e.code >= 500
                if not retriable or attempt == self.max_retries:
                    raise PasskError(e.code, _message(payload)) from None
                retry_after = e.headers.get("Retry-After")
                wait = float(retry_after) if retry_after and retry_after.replace(".", "", 1).isdigit() else delay
            except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
                if attempt == self.max_retries:
                    raise PasskError(0, str(e)) from None
                wait = delay
            time.sleep(wait)
            delay = min(delay * 2, 10.0)
        raise PasskError(0, "unreachable")


def _message(payload):
    try:
        return json.loads(payload).get("error", payload.decode("utf-8", "replace"))
    except ValueError:
        return payload.decode("utf-8", "replace")
