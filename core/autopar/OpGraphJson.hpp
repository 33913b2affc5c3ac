// Users' own operator graphs as JSON (documented in docs/autopar.md):
//
// { "name": "my-mlp",
//   "outputReplicated": true,                      // optional, default true
//   "tensors": [ {"name": "x",  "shape": [1024, 4096], "kind": "input",  "elementBytes": 2},
//                {"name": "w1", "shape": [4096, 16384], "kind": "weight"} ],
//   "ops": [ {"name": "fc1", "kind": "matmul", "einsum": "ih,hf->if", "inputs": ["x", "w1"],
//             "unsplittable": "", "megatron": "f", "batch": "i", "layer": 0} ],
//   "outputs": ["fc2"] }
//
// A tensor's kind is "input" (data: any layout, no gradient), "layer-input" (a previous layer's
// output: arrives replicated, its gradient returns replicated) or "weight" (one consumer).
// An op's output tensor takes the op's name. `kind` is one of OpKindsList() (it sets the FLOPs
// per point) unless "flopsPerPoint" is given, which then allows any kind. Ops must come in a
// topological order.
#pragma once

#include "autopar/OpGraph.hpp"

#include <string>

namespace paralens::core {

// Throws Error naming `source` and the op or tensor at fault, with what was expected.
OpGraph ParseOpGraphJson(const std::string& text, const std::string& source);
OpGraph LoadOpGraphFile(const std::string& path);

} // namespace paralens::core
