"""ONNX models read with a small protobuf decoder (Python's standard library: the CI machine has
no python3-onnx), for tests/cli/onnx.sh."""
import struct


def varint(b, i):
    value = shift = 0
    while True:
        byte = b[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def fields(b):
    """A protobuf message as [(field number, wire type, value)]: ints for varints, else bytes."""
    out, i = [], 0
    while i < len(b):
        key, i = varint(b, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(b, i)
        elif wire == 1 or wire == 5:
            size = 8 if wire == 1 else 4
            value, i = b[i:i + size], i + size
        elif wire == 2:
            size, i = varint(b, i)
            value, i = b[i:i + size], i + size
        else:
            raise ValueError("wire type %d" % wire)
        out.append((number, wire, value))
    return sorted(out, key=lambda f: f[0])  # field order; a repeated field keeps its own


def split(path):
    """ModelProto without its graph's initializers (field 7 graph, 5 initializer, 8 name), and the
    initializers by name, each as fields()."""
    model = fields(open(path, "rb").read())
    graph = [fields(v) for n, _, v in model if n == 7]
    assert len(graph) == 1, path
    tensors = {}
    for n, _, v in graph[0]:
        if n == 5:
            t = fields(v)
            tensors[[x for m, _, x in t if m == 8][0].decode()] = t
    rest = [f for f in model if f[0] != 7] + [f for f in graph[0] if f[0] != 5]
    return rest, tensors


def raw_floats(tensor):
    """The float32 values of an initializer held as raw_data (field 9)."""
    raw = [v for n, _, v in tensor if n == 9]
    assert len(raw) == 1, "not raw_data"
    return struct.unpack("<%df" % (len(raw[0]) // 4), raw[0])
