"""Encodes the fixture batches in cases.json with prime-rl's own msgspec structs (and, for the newest version,
its own packer), so air's tests can compare bytes with prime-rl's. Not run in CI (needs python3-msgspec and a
prime-rl source tree); see make-golden.sh, which exports the pinned commits and runs this in a Debian sid chroot.

Usage: make_golden.py <prime-rl src dir (holds prime_rl/)> <version: 0.8 | 0.9> <cases.json> <out dir>
Writes <out dir>/<case>.bin (0.8: one TrainingBatch) or <out dir>/<case>/rank_<R>.bin (0.9: one list[MicroBatch]
per data rank; 0.9 also partition.json: prime-rl's balanced_partition on random loads), then decodes every file
again with prime-rl's decoder.
"""

import importlib.util
import json
import os
import sys
import types


def load(module_name, path):
    """Imports one prime-rl file under its own module name without running the package __init__ files."""
    parts = module_name.split(".")
    for i in range(1, len(parts)):
        sys.modules.setdefault(".".join(parts[:i]), types.ModuleType(".".join(parts[:i])))
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def main():
    src, version, cases_file, out = sys.argv[1:5]
    import msgspec

    with open(cases_file) as f:
        cases = json.load(f)["cases"]
    encoder = msgspec.msgpack.Encoder()
    if version == "0.8":
        t = load("prime_rl.transport.types", os.path.join(src, "prime_rl/transport/types.py"))
        decoder = msgspec.msgpack.Decoder(type=t.TrainingBatch)
    else:
        t = load("prime_rl.transports.rollouts.types", os.path.join(src, "prime_rl/transports/rollouts/types.py"))
        batch = load("prime_rl.trainer.batch", os.path.join(src, "prime_rl/trainer/batch.py"))
        decoder = msgspec.msgpack.Decoder(type=list[t.MicroBatch])
    os.makedirs(out, exist_ok=True)
    for case in cases:
        samples = [t.TrainingSample(**s) for s in case["samples"]]
        if version == "0.8":
            path = os.path.join(out, case["name"] + ".bin")
            data = encoder.encode(t.TrainingBatch(examples=samples, step=case["step"]))
            with open(path, "wb") as f:
                f.write(data)
            assert len(decoder.decode(data).examples) == len(samples)
            continue
        grid = batch.prepare_batch(
            rollouts=samples,
            seq_len=case["seq_len"],
            num_train_workers=case["data_world_size"],
            bin_cost=batch.build_bin_cost(None),
            pad_to_multiple_of=case["pad_to_multiple_of"],
        )
        os.makedirs(os.path.join(out, case["name"]), exist_ok=True)
        for rank, micro_batches in enumerate(grid):
            data = encoder.encode(micro_batches)
            with open(os.path.join(out, case["name"], f"rank_{rank}.bin"), "wb") as f:
                f.write(data)
            assert len(decoder.decode(data)) == len(micro_batches)
    if version != "0.8":
        # prime-rl's rank balancing on its own, over more shapes than the batches above reach.
        import random

        rnd = random.Random(3)
        shapes = [([rnd.randrange(1, 50) for _ in range(k * n)], k) for k in (2, 3, 4) for n in (1, 2, 3, 5)]
        with open(os.path.join(out, "partition.json"), "w") as f:
            json.dump([[w, k, batch.balanced_partition(w, k)] for w, k in shapes], f)
    print(f"prime-rl {version}: {len(cases)} cases written to {out} (msgspec {msgspec.__version__})")


if __name__ == "__main__":
    main()
