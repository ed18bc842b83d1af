"""A replay shard's client that is not rlgraph: it knows nothing of the run's config.

It compiles the project's .proto with grpc_tools, asks gRPC's health service and Describe,
builds records from the leaves Describe names (key, dtype, shape), inserts them, samples,
and checks every sampled row against the record at its slot, byte for byte. Then it watches
the health service while it stops the shard: NOT_SERVING comes while the shard still answers
(its drain). It prints one JSON object of what it saw.

Usage: replay_client.py ADDRESS PROTO_DIR OUT_DIR
"""

import json
import sys

import numpy as np
from grpc_tools import protoc

address, proto_dir, out_dir = sys.argv[1:4]
status = protoc.main([
    "protoc", f"-I{proto_dir}", f"--python_out={out_dir}", f"--grpc_python_out={out_dir}",
    "rlgraph/distributed/v1/distributed.proto",
])
assert status == 0, f"protoc failed: {status}"
sys.path.insert(0, out_dir)

import grpc  # noqa: E402
from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402
from rlgraph.distributed.v1 import distributed_pb2 as pb, distributed_pb2_grpc as rpc  # noqa: E402

DTYPES = {
    pb.DTYPE_BOOL: np.bool_, pb.DTYPE_INT32: np.int32, pb.DTYPE_INT64: np.int64,
    pb.DTYPE_UINT8: np.uint8, pb.DTYPE_FLOAT32: np.float32, pb.DTYPE_FLOAT64: np.float64,
}
N = 6

channel = grpc.insecure_channel(address)
grpc.channel_ready_future(channel).result(timeout=10)
health = health_pb2_grpc.HealthStub(channel)
replay = rpc.ReplayStub(channel)
seen = {}

seen["health"] = health_pb2.HealthCheckResponse.ServingStatus.Name(
    health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5).status)
seen["health_replay"] = health_pb2.HealthCheckResponse.ServingStatus.Name(
    health.Check(health_pb2.HealthCheckRequest(service="rlgraph.distributed.v1.Replay"), timeout=5).status)

described = replay.Describe(pb.DescribeRequest(), timeout=5)
seen["protocol_version"] = described.protocol_version
seen["leaves"] = [[leaf.key, pb.Dtype.Name(leaf.dtype), list(leaf.shape)] for leaf in described.leaves]

# Record i's leaves: values that fit any box of these dtypes (ints 0 and 1, floats i + k/100).
arrays = {}
for leaf in described.leaves:
    dtype, shape = DTYPES[leaf.dtype], tuple(leaf.shape)
    size = int(np.prod(shape)) if shape else 1
    rows = []
    for i in range(N):
        if dtype == np.bool_:
            row = np.full(size, i % 3 == 0)
        elif np.issubdtype(dtype, np.integer):
            row = np.full(size, i % 2)
        else:
            row = i + np.arange(size) / 100.0
        rows.append(row.astype(dtype).reshape(shape))
    arrays[leaf.key] = np.stack(rows)

records = pb.Nest(leaves=[
    pb.Tensor(key=leaf.key, dtype=leaf.dtype, shape=list(arrays[leaf.key].shape),
              data=arrays[leaf.key].astype(arrays[leaf.key].dtype.newbyteorder("<")).tobytes())
    for leaf in described.leaves
])
seen["size_after_insert"] = replay.Insert(pb.InsertRequest(actor=9, weight_version=1, records=records), timeout=5).size

sample = replay.Sample(pb.SampleRequest(batch_size=N), timeout=5)
checked = 0
for tensor in sample.records.leaves:
    got = np.frombuffer(tensor.data, dtype=np.dtype(DTYPES[tensor.dtype]).newbyteorder("<")).reshape(tuple(tensor.shape))
    for row, slot in enumerate(sample.indices):
        assert got[row].tobytes() == arrays[tensor.key][slot].tobytes(), (tensor.key, row, slot)
        checked += 1
seen["sampled"] = len(sample.indices)
seen["rows_checked"] = checked
seen["weights"] = len(sample.weights)

# Watch, stop, and see NOT_SERVING while the shard still answers.
watch = health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=20)
first = next(watch)
replay.Stop(pb.StopRequest(), timeout=5)
second = next(watch)
seen["watch"] = [health_pb2.HealthCheckResponse.ServingStatus.Name(s.status) for s in (first, second)]
seen["size_while_draining"] = replay.Stats(pb.StatsRequest(), timeout=5).size
watch.cancel()
print(json.dumps(seen))
