// PyTorch execution traces: the JSON graph of ops and tensors that PyTorch's
// ExecutionTraceObserver writes (schema 1.0.x; also read by Chakra and by Holistic Trace
// Analysis). It has no timeline of its own; given beside the profiler (Kineto) trace of the same
// rank, it says which CPU op produced the tensors each CPU op read, which the profiler trace does
// not. The two are joined by the record-function id: an ET node's "rf_id" is the profiler
// event's "Record function id" argument (its "External id" in older traces).
//
// What paralens takes from it: the data dependencies between CPU ops on different threads (the
// forward on the main thread and the backward on autograd's thread, say). Within one thread the
// profiler trace's order already says as much. A tensor is [id, storage id, offset, elements,
// element size, device]; its producer is the op that last listed it among its outputs, in the
// order of the nodes' ids (the order ops began), innermost ops last.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace paralens::core {

struct ExecutionTraceOp {
    int64_t id = 0;
    int64_t rfId = -1;  // record-function id (-1: none)
    int64_t parent = 0;
    int64_t thread = 0; // the ET's own thread number ("tid"), not the OS's
    std::string name;
    std::vector<int64_t> inputs, outputs; // tensor ids
};

struct ExecutionTrace {
    std::string origin; // the file, for messages
    std::string schema;
    int64_t pid = -1;
    std::vector<ExecutionTraceOp> ops; // by id
};

// Whether the first bytes of a file look like an execution trace ("schema" and "nodes" keys and
// an rf_id or the observer's root node).
bool LooksLikeExecutionTrace(std::string_view prefix);

// Reads one (gzip allowed). Throws Error naming the file and the node that cannot be read.
ExecutionTrace ReadExecutionTrace(const std::string& path);
ExecutionTrace ParseExecutionTrace(std::string_view json, const std::string& origin);

// (producer rf_id, consumer rf_id) for every tensor a CPU op read that an op of another ET
// thread produced; ops without an rf_id are left out.
std::vector<std::pair<int64_t, int64_t>> CrossThreadDataDependencies(const ExecutionTrace& et);

} // namespace paralens::core
