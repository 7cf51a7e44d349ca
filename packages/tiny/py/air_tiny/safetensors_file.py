"""The safetensors file format (what prime-rl writes adapters in, `adapter_model.safetensors`), read and written
without the safetensors package: 8 bytes little-endian header size, a JSON header naming each tensor's dtype,
shape and byte range (plus `__metadata__`), padded with spaces to 8 bytes, then the tensors' little-endian bytes."""

import json
import os
import struct

import numpy
import torch

# safetensors dtype code -> numpy dtype (little-endian)
NUMPY = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}
CODES = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.int64: "I64", torch.int32: "I32"}


def dumps(tensors, metadata=None):
    """The bytes of a safetensors file holding `tensors`."""
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        if t.dtype not in CODES:
            raise ValueError(f"{name}: dtype {t.dtype} is not one this writer handles ({sorted(NUMPY)})")
        data = t.numpy().astype(NUMPY[CODES[t.dtype]], copy=False).tobytes()
        header[name] = {"dtype": CODES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    header["__metadata__"] = metadata or {"format": "pt"}
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + b"".join(chunks)


def save(tensors, path, metadata=None):
    """Writes the file whole before it is visible (a temporary file, then a rename)."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(dumps(tensors, metadata))
    os.replace(tmp, path)


def load(path):
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 8:
        raise ValueError(f"{path}: not a safetensors file (shorter than its header size)")
    size = struct.unpack("<Q", buf[:8])[0]
    header = json.loads(buf[8 : 8 + size])
    body = buf[8 + size :]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in NUMPY:
            raise ValueError(f"{path}: {name} has dtype {info['dtype']}, not one this reader handles ({sorted(NUMPY)})")
        begin, end = info["data_offsets"]
        array = numpy.frombuffer(body[begin:end], dtype=NUMPY[info["dtype"]]).reshape(info["shape"])
        out[name] = torch.from_numpy(array.copy())
    return out
