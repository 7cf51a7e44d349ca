"""prime-rl's filesystem transport, read side, both versions air writes:

- 0.8 (v0.8.0): `<run_dir>/rollouts/step_<N>/train_rollouts.bin`, one TrainingBatch (the trainer packs it);
- 0.9 (after #3189): `<run_dir>/rollouts/step_<N>/rank_<R>.bin`, one list[MicroBatch] per data rank, samples
  already packed into sequences (`sequence_lengths`), or the same bytes over ZMQ (prime-rl's
  `transports/rollouts/zmq.py`: PUB on `tcp://host:port`, topic `data_rank|R|`; each receiver PUSHes its rank to
  `port + 1` once subscribed). Each trainer rank reads only its own data rank's list and unpacks the sequences
  back into samples.

The 0.8 file is msgspec's positional (array_like) MessagePack of TrainingBatch [examples, step, run_idx] whose
examples are TrainingSample [token_ids, mask, logprobs, temperatures, env_name, ref_logprobs, mm_kwargs,
routed_experts, mm_token_type_ids, rl_weights, ce_weights, ref_kl_weights, advantages]. A shorter array takes
the defaults (None) for the missing trailing fields, as msgspec's decoder does.
"""

import os

import msgpack

SAMPLE_FIELDS = [
    "token_ids",
    "mask",
    "logprobs",
    "temperatures",
    "env_name",
    "ref_logprobs",
    "mm_kwargs",
    "routed_experts",
    "mm_token_type_ids",
    "rl_weights",
    "ce_weights",
    "ref_kl_weights",
    "advantages",
]
REQUIRED_SAMPLE_FIELDS = 5


MICRO_BATCH_FIELDS = [
    "input_ids",
    "loss_mask",
    "advantages",
    "inference_logprobs",
    "position_ids",
    "sequence_lengths",
    "temperatures",
    "env_names",
    "seq_lens",
    "ref_logprobs",
    "routed_experts",
    "mm_kwargs",
    "mm_token_type_ids",
    "rl_weights",
    "ce_weights",
    "ref_kl_weights",
]
REQUIRED_MICRO_BATCH_FIELDS = 9


def rollout_path(run_dir, step):
    return os.path.join(run_dir, "rollouts", f"step_{step}", "train_rollouts.bin")


def step_dir(run_dir, step):
    return os.path.join(run_dir, "rollouts", f"step_{step}")


def find_step(run_dir, step):
    """The files of step N and their format: ("0.8", [train_rollouts.bin]), ("0.9", [rank_0.bin, ...]) or None.
    Only complete files count: the writer renames `*.tmp` into place, highest rank first, so a step whose
    rank_0.bin is there has all its rank files."""
    d = step_dir(run_dir, step)
    if not os.path.isdir(d):
        return None
    names = os.listdir(d)
    if "train_rollouts.bin" in names:
        return "0.8", [os.path.join(d, "train_rollouts.bin")]
    ranks = sorted(int(n[5:-4]) for n in names if n.startswith("rank_") and n.endswith(".bin") and n[5:-4].isdigit())
    if 0 not in ranks or ranks != list(range(len(ranks))):
        return None
    return "0.9", [os.path.join(d, f"rank_{r}.bin") for r in ranks]


def broadcast_dir(run_dir, step):
    return os.path.join(run_dir, "broadcasts", f"step_{step}")


MICRO_BATCH_PER_TOKEN = ("loss_mask", "advantages", "inference_logprobs", "position_ids", "temperatures", "env_names")


def struct_row(kind, i, row, fields, required, per_token):
    """msgspec's positional (array_like) struct `row` as a dict: `required` to all of `fields` entries, the missing
    trailing ones None (their defaults); each `per_token` field as long as the first field (the token ids)."""
    if not isinstance(row, list) or not required <= len(row) <= len(fields):
        raise ValueError(f"{kind} {i} must be an array of {required}..{len(fields)} fields")
    out = dict(zip(fields, row + [None] * (len(fields) - len(row))))
    n = len(out[fields[0]])
    for name in per_token:
        if len(out[name]) != n:
            raise ValueError(f"{kind} {i}: {name} has {len(out[name])} entries, {fields[0]} {n}")
    return out


def decode_batch(data):
    raw = msgpack.unpackb(data, raw=False, strict_map_key=False)
    if not isinstance(raw, list) or not 2 <= len(raw) <= 3:
        raise ValueError("TrainingBatch must be an array [examples, step, run_idx?]")
    examples, step = raw[0], raw[1]
    samples = [
        struct_row("TrainingSample", i, row, SAMPLE_FIELDS, REQUIRED_SAMPLE_FIELDS, ("mask", "logprobs", "temperatures"))
        for i, row in enumerate(examples)
    ]
    return {"examples": samples, "step": step, "run_idx": raw[2] if len(raw) > 2 else None}


def read_batch(run_dir, step):
    with open(rollout_path(run_dir, step), "rb") as f:
        return decode_batch(f.read())


def decode_micro_batches(data):
    """One rank's list[MicroBatch] → (the samples packed in it, how many micro-batches). Padding and zero-loss
    dummies are included (their mask is all False); each sample carries its micro-batch's index (`micro_batch`)."""
    raw = msgpack.unpackb(data, raw=False, strict_map_key=False)
    if not isinstance(raw, list):
        raise ValueError("a rank file must hold a list of MicroBatch")
    samples = []
    for i, row in enumerate(raw):
        mb = struct_row("MicroBatch", i, row, MICRO_BATCH_FIELDS, REQUIRED_MICRO_BATCH_FIELDS, MICRO_BATCH_PER_TOKEN)
        n = len(mb["input_ids"])
        if sum(mb["sequence_lengths"]) != n:
            raise ValueError(f"MicroBatch {i}: sequence_lengths sum to {sum(mb['sequence_lengths'])}, not {n}")
        start = 0
        for length in mb["sequence_lengths"]:
            end = start + length
            cut = lambda key: None if mb[key] is None else mb[key][start:end]  # noqa: E731
            samples.append({
                "token_ids": mb["input_ids"][start:end],
                "mask": mb["loss_mask"][start:end],
                "logprobs": mb["inference_logprobs"][start:end],
                "temperatures": mb["temperatures"][start:end],
                "env_name": mb["env_names"][start] if length else "",
                "ref_logprobs": cut("ref_logprobs"),
                "rl_weights": cut("rl_weights"),
                "ce_weights": cut("ce_weights"),
                "ref_kl_weights": cut("ref_kl_weights"),
                "advantages": mb["advantages"][start:end],
                "micro_batch": i,
            })
            start = end
    return samples, len(raw)


def rank_batch(decoded, step, paths):
    """A rank's batch from `decode_micro_batches`: the samples with a trainable token, how many micro-batches the
    rank trains (prime-rl logs one loss per micro-batch) and how many sequences without one count in prime-rl's
    per-sample `is_masked` (those without `rl_weights`: `compute_loss` runs the loss fn on every sequence then)."""
    samples, micro_batches = decoded
    trained = [s for s in samples if any(s["mask"])]
    empty = sum(1 for s in samples if not any(s["mask"]) and s["rl_weights"] is None)
    return {"examples": trained, "step": step, "run_idx": None, "format": "0.9", "paths": paths,
            "micro_batches": micro_batches, "empty_sequences": empty}


def read_rank(run_dir, step, rank):
    """Data rank R's samples of step N (0.9 file), or None while `rank_R.bin` is not there (prime-rl's
    FileSystemMicroBatchReceiver waits for exactly that path; the writer renames it into place)."""
    path = os.path.join(step_dir(run_dir, step), f"rank_{rank}.bin")
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return rank_batch(decode_micro_batches(f.read()), step, [path])


def read_shard(run_dir, step, rank, world):
    """0.8: every rank reads the one TrainingBatch file and takes samples rank, rank + world, ..."""
    path = rollout_path(run_dir, step)
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        batch = decode_batch(f.read())
    # prime-rl 0.8's trainer packs its shard into micro-batches itself; here the shard is one micro-batch.
    return {**batch, "examples": batch["examples"][rank::world], "format": "0.8", "paths": [path], "micro_batches": 1}


def data_rank(rank, world_size, cp):
    """prime-rl's DataLoader (trainer/rl/data.py at 559b447): `dp_rank = rank // (world_size // dp_world_size)`,
    the cp ranks of one data-parallel group reading the same topic."""
    if cp < 1 or world_size % cp != 0:
        raise SystemExit(f"trainer TOML: model.cp = {cp} must divide the world size {world_size}")
    return rank // cp


class ZmqReceiver:
    """prime-rl's ZMQMicroBatchReceiver: SUB to the data rank's topic, then announce READY on port + 1. With
    context parallel > 1 every rank is a receiver of its data rank's topic, as prime-rl's: `rank` is the global
    rank, the topic `data_rank(rank, world_size, cp)`; each sends READY once and keeps its PUSH socket open."""

    def __init__(self, host, port, rank, hwm=10, world_size=1, cp=1):
        import zmq

        rank = data_rank(rank, world_size, cp)

        self.zmq = zmq
        self.context = zmq.Context.instance()
        self.socket = self.context.socket(zmq.SUB)
        self.socket.setsockopt(zmq.RCVHWM, hwm)
        self.socket.connect(f"tcp://{host}:{port}")
        self.topic = b"data_rank|" + str(rank).encode() + b"|"
        self.socket.setsockopt(zmq.SUBSCRIBE, self.topic)
        self.ready = self.context.socket(zmq.PUSH)
        self.ready.setsockopt(zmq.SNDHWM, hwm)
        self.ready.connect(f"tcp://{host}:{port + 1}")
        self.ready.send(str(rank).encode())

    def receive(self, step, timeout_ms):
        """The next list's samples, or None when nothing came within timeout_ms."""
        if not self.socket.poll(timeout_ms):
            return None
        _topic, payload = self.socket.recv_multipart()
        return rank_batch(decode_micro_batches(payload), step, [])

    def close(self):
        self.socket.close(linger=0)
        self.ready.close(linger=0)


def read_step(run_dir, step):
    """The batch of step N in either format, or None when it is not (completely) there yet."""
    found = find_step(run_dir, step)
    if found is None:
        return None
    version, paths = found
    if version == "0.8":
        with open(paths[0], "rb") as f:
            batch = decode_batch(f.read())
        return {**batch, "format": "0.8", "paths": paths}
    samples, micro_batches = [], 0
    for path in paths:
        with open(path, "rb") as f:
            got, n = decode_micro_batches(f.read())
        samples.extend(got)
        micro_batches += n
    return rank_batch((samples, micro_batches), step, paths)
