// The lectures' example graphs: the MLP Y = X W1 W2, Megatron transformer layers, a small conv net.
#include "autopar/OpGraph.hpp"

#include "common/Error.hpp"

#include <string>

namespace paralens::core {

namespace {

using Args = GraphBuilder::OpArgs;

void CheckDims(const TransformerDims& d)
{
    Require(d.batch >= 1 && d.seq >= 1 && d.hidden >= 1 && d.ffn >= 1, "transformer dimensions must be at least 1");
    Require(d.heads >= 1 && d.hidden % d.heads == 0,
            "hidden size " + std::to_string(d.hidden) + " is not divisible by the " + std::to_string(d.heads) + " heads");
}

// One pre-LN transformer layer reading x [b, s, h]; returns its output [b, s, h].
int AddTransformerLayer(GraphBuilder& gb, const TransformerDims& d, int x, const std::string& p)
{
    const int64_t hd = d.hidden / d.heads;
    const int e = d.elementBytes;
    auto op = [&](std::string name, std::string kind, std::string einsum, std::vector<int> in, std::string unsplittable = "",
                  std::string megatron = "") {
        const double fpp = FlopsPerPointOf(kind);
        return gb.Op(Args{p + name, std::move(kind), std::move(einsum), std::move(in), fpp, std::move(unsplittable), std::move(megatron), "b", e});
    };
    const int ln1 = op("ln1", "layernorm", "bsh->bsh", {x}, "h");
    const int wq = gb.Weight(p + "wq", {d.hidden, d.heads, hd}, e);
    const int wk = gb.Weight(p + "wk", {d.hidden, d.heads, hd}, e);
    const int wv = gb.Weight(p + "wv", {d.hidden, d.heads, hd}, e);
    const int q = op("q", "matmul", "bsh,hnd->bsnd", {ln1, wq}, "", "n");
    const int k = op("k", "matmul", "bsh,hnd->bsnd", {ln1, wk}, "", "n");
    const int v = op("v", "matmul", "bsh,hnd->bsnd", {ln1, wv}, "", "n");
    const int scores = op("scores", "batched-matmul", "bsnd,btnd->bnst", {q, k}, "", "n");
    const int probs = op("softmax", "softmax", "bnst->bnst", {scores}, "t", "n");
    const int ctx = op("context", "batched-matmul", "bnst,btnd->bsnd", {probs, v}, "", "n");
    const int wo = gb.Weight(p + "wo", {d.heads, hd, d.hidden}, e);
    const int attn = op("attn-out", "matmul", "bsnd,ndh->bsh", {ctx, wo}, "", "n");
    const int res1 = op("residual1", "add", "bsh,bsh->bsh", {x, attn});
    const int ln2 = op("ln2", "layernorm", "bsh->bsh", {res1}, "h");
    const int w1 = gb.Weight(p + "w1", {d.hidden, d.ffn}, e);
    const int h1 = op("fc1", "matmul", "bsh,hf->bsf", {ln2, w1}, "", "f");
    const int g = op("gelu", "gelu", "bsf->bsf", {h1}, "", "f");
    const int w2 = gb.Weight(p + "w2", {d.ffn, d.hidden}, e);
    const int h2 = op("fc2", "matmul", "bsf,fh->bsh", {g, w2}, "", "f");
    return op("residual2", "add", "bsh,bsh->bsh", {res1, h2});
}

} // namespace

OpGraph BuildMlpGraph(const TransformerDims& d)
{
    CheckDims(d);
    const int64_t tokens = d.batch * d.seq;
    GraphBuilder gb("mlp");
    const int e = d.elementBytes;
    const int x = gb.LayerInput("x", {tokens, d.hidden}, e);
    const int w1 = gb.Weight("w1", {d.hidden, d.ffn}, e);
    const int w2 = gb.Weight("w2", {d.ffn, d.hidden}, e);
    const int h = gb.Op(Args{"fc1", "matmul", "ih,hf->if", {x, w1}, 2.0, "", "f", "i", e});
    const int g = gb.Op(Args{"gelu", "gelu", "if->if", {h}, 8.0, "", "f", "i", e});
    const int y = gb.Op(Args{"fc2", "matmul", "if,fh->ih", {g, w2}, 2.0, "", "f", "i", e});
    return gb.Finish({y});
}

OpGraph BuildTransformerGraph(const TransformerDims& d, int layers)
{
    CheckDims(d);
    Require(layers >= 1, "--layers must be at least 1 (got " + std::to_string(layers) + ")");
    GraphBuilder gb(layers == 1 ? "transformer-layer" : "transformer-" + std::to_string(layers));
    int x = gb.LayerInput("x", {d.batch, d.seq, d.hidden}, d.elementBytes);
    for (int l = 0; l < layers; ++l) {
        gb.SetLayer(l);
        std::string prefix; // built piecewise: GCC 12 warns falsely (-Wrestrict) on "L" + to_string + "."
        if (layers > 1) {
            prefix = "L";
            prefix += std::to_string(l);
            prefix += '.';
        }
        x = AddTransformerLayer(gb, d, x, prefix);
    }
    return gb.Finish({x}, layers);
}

OpGraph BuildConvNetGraph(int64_t batch, int64_t channels, int64_t classes)
{
    Require(batch >= 1 && channels >= 1 && classes >= 1, "conv net sizes must be at least 1");
    constexpr int64_t kSide = 32;
    GraphBuilder gb("convnet");
    // Same-padded 3x3 convolutions: the input is indexed by the output's h and w (the stencil's
    // halo is not modelled); h, w, kh and kw are not split (the lectures' "careful boundary handling").
    const int img = gb.Input("images", {batch, 3, kSide, kSide});
    const int k1 = gb.Weight("conv1.w", {channels, 3, 3, 3});
    const int c1 = gb.Op(Args{"conv1", "conv", "nchw,ocyx->nohw", {img, k1}, 2.0, "hwyx", "o", "n", 2});
    const int r1 = gb.Op(Args{"relu1", "relu", "nohw->nohw", {c1}, 1.0, "hw", "o", "n", 2});
    const int k2 = gb.Weight("conv2.w", {channels, channels, 3, 3});
    const int c2 = gb.Op(Args{"conv2", "conv", "nchw,ocyx->nohw", {r1, k2}, 2.0, "hwyx", "c", "n", 2});
    const int r2 = gb.Op(Args{"relu2", "relu", "nohw->nohw", {c2}, 1.0, "hw", "", "n", 2});
    const int fc = gb.Weight("fc.w", {channels, kSide, kSide, classes});
    const int logits = gb.Op(Args{"fc", "matmul", "nchw,chwk->nk", {r2, fc}, 2.0, "", "k", "n", 2});
    const int loss = gb.Op(Args{"loss", "cross-entropy", "nk->n", {logits}, 4.0, "", "k", "n", 4});
    return gb.Finish({loss});
}

} // namespace paralens::core
